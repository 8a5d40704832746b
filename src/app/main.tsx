import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { applyTheme } from '../ui/theme.ts';
import { preloadScreenFor } from './lazyRoutes.tsx';
import { startStudioEarly } from './startStudio.ts';
import { StudioRoot } from './StudioRoot.tsx';
import './index.css';

// Boot (and the first requests of the page the address names) before React's first render.
startStudioEarly();
applyTheme();
preloadScreenFor(window.location.pathname);
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <StudioRoot />
    </StrictMode>,
  );
}
