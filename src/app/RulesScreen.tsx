import { RulesPage } from '../features/rules/index.ts';

/** The approval rules page (loaded on demand, lazyRoutes.tsx). */
export function RulesScreen() {
  return (
    <div className="min-h-0 flex-1 overflow-y-auto">
      <RulesPage />
    </div>
  );
}
