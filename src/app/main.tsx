import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { applyTheme } from '../ui/theme.ts';
import { StudioRoot } from './StudioRoot.tsx';
import './index.css';

applyTheme();
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <StudioRoot />
    </StrictMode>,
  );
}
