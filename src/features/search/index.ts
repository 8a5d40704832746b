export { SessionSearch } from './SessionSearch.tsx';
