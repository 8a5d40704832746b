export { RulesPage } from './RulesPage.tsx';
export {
  RuleActions,
  RuleEditor,
  suggestionFor,
  type RuleSeedInput,
  type RuleSuggestionInput,
} from './RuleEditor.tsx';
