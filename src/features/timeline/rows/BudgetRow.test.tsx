import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import { budgetEvent } from '../../../test/fixtures.ts';
import { BudgetRow } from './BudgetRow.tsx';

describe('BudgetRow', () => {
  it('shows a used / limit gauge for a dimension with a limit', () => {
    render(<BudgetRow event={budgetEvent(8)} href="/sessions/s/events/8" />);
    expect(screen.getAllByRole('meter').length).toBeGreaterThan(0);
  });

  it('shows only the count, without a gauge, when the limit is "0" (no limit known)', () => {
    const event = budgetEvent(9);
    const unlimited = {
      ...event,
      budgetSnapshot: {
        ...event.budgetSnapshot,
        dimensions: [
          {
            name: 'INPUT_TOKENS',
            scope: 'SESSION',
            limit: '0',
            reserved: '0',
            consumed: '5100',
            remaining: '0',
            unit: 'tokens',
          },
        ],
      },
    };
    render(<BudgetRow event={unlimited} href="/sessions/s/events/9" />);
    expect(screen.queryByRole('meter')).toBeNull();
    expect(screen.getByText(/no limit known/)).toBeTruthy();
    expect(screen.queryByText(/\/ 0/)).toBeNull();
  });
});
