export { KillSwitch } from './KillSwitch.tsx';
