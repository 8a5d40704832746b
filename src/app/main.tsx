import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { applyTheme } from '../ui/theme.ts';
import { preloadScreenFor } from './lazyRoutes.tsx';
import { StudioRoot } from './StudioRoot.tsx';
import './index.css';

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
