import type { EventOf } from '../../../graphql/eventFragments.ts';
import { SafeText } from '../../../ui/SafeText.tsx';
import { groupDigits } from '../labels.ts';
import { EventRowHeader } from './RowHeader.tsx';

/** Percent used, computed in BigInt so large limits stay exact. */
export function percentUsed(consumed: string, limit: string): number {
  const max = BigInt(limit);
  if (max <= 0n) return 0;
  const used = BigInt(consumed);
  const basisPoints = (used * 10_000n) / max;
  return Math.min(100, Number(basisPoints) / 100);
}

/** A budget snapshot as one used / limit gauge per dimension. */
export function BudgetRow({ event, href }: { event: EventOf<'AgentBudgetEvent'>; href: string }) {
  const budget = event.budgetSnapshot;
  return (
    <div>
      <EventRowHeader event={event} href={href}>
        <span>
          paid by <SafeText text={budget.payer} />
        </span>
      </EventRowHeader>
      <ul className="mt-1 grid gap-1 text-xs sm:grid-cols-2">
        {budget.dimensions.map((dimension) => {
          const label = `${dimension.name} (${dimension.scope})`;
          // A limit of "0" means the runtime reports no limit: show the count, not a gauge.
          const limited = BigInt(dimension.limit) > 0n;
          const percent = limited ? percentUsed(dimension.consumed, dimension.limit) : 0;
          return (
            <li key={`${dimension.name}:${dimension.scope}`}>
              <div className="flex justify-between gap-2 text-slate-700 dark:text-slate-300">
                <SafeText text={label} />
                <span>
                  {groupDigits(dimension.consumed)}
                  {limited ? ` / ${groupDigits(dimension.limit)}` : ''}{' '}
                  <SafeText text={dimension.unit} />
                  {limited ? null : (
                    <span className="text-slate-500 dark:text-slate-400"> (no limit known)</span>
                  )}
                </span>
              </div>
              {limited ? (
                <div
                  role="meter"
                  aria-label={`${label} used`}
                  aria-valuemin={0}
                  aria-valuemax={100}
                  aria-valuenow={percent}
                  aria-valuetext={`${groupDigits(dimension.consumed)} of ${groupDigits(dimension.limit)} ${dimension.unit}`}
                  className="mt-0.5 h-1.5 overflow-hidden rounded bg-slate-200 dark:bg-slate-700"
                >
                  <div
                    className={`h-full ${percent >= 90 ? 'bg-red-600' : percent >= 70 ? 'bg-amber-500' : 'bg-emerald-600'}`}
                    style={{ width: `${percent}%` }}
                  />
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
