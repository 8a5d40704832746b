export { NewSessionForm } from './NewSessionForm.tsx';
