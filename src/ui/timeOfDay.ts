// One formatter for every call: toLocaleTimeString builds a new one each time, and rows and cards
// format times on every render. h23, because hour12: false reads midnight as "24:00:00" in en-US.
const TIME_OF_DAY = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** The local time of day of an ISO timestamp (the input itself when it is not a time). */
export function timeOfDay(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : TIME_OF_DAY.format(date);
}
