// Tailwind 4 reads its theme from CSS (src/app/index.css, `@theme`); this file names the
// sources and the dark-mode strategy for tools that still look for a config file.
export default {
  content: ['./index.html', './src/**/*.{ts,tsx}'],
  darkMode: 'class',
};
