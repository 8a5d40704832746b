// One formatter for every call: toLocaleTimeString builds a new one each time, and rows and cards
// format times on every render. h23, because hour12: false reads midnight as "24:00:00" in en-US.
const TIME_OF_DAY = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

// Live rows arrive many to a second with the same time of day: the last second formatted is
// kept, keyed on the instant truncated to the second (a cache hit is a string compare instead of
// a Date and an Intl format, ~10 µs each, per row).
let lastSecond = Number.NaN;
let lastText = '';

/** The local time of day of an ISO timestamp (the input itself when it is not a time). */
export function timeOfDay(iso: string): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const second = Math.floor(at / 1000);
  if (second !== lastSecond) {
    lastText = TIME_OF_DAY.format(at);
    lastSecond = second;
  }
  return lastText;
}
