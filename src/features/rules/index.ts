export { RulesPage } from './RulesPage.tsx';
export { RuleActions, RuleEditor, type RuleSeedInput } from './RuleEditor.tsx';
