// How the pages show times, money and counts.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** An RFC 3339 time as a local date and time; a dash for none. */
export function when(t: string | null): string {
  return t ? dateTime.format(new Date(t)) : '—';
}

const zoned = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
});

/** An RFC 3339 time in the browser's zone, with the zone's abbreviation (e.g. "Nov 26, 2026, 9:05 AM GMT+1"). */
export function whenZoned(t: string): string {
  return zoned.format(new Date(t));
}

/** An RFC 3339 time in UTC, to the second: "2026-11-26 08:05:09 UTC". */
export function whenUtc(t: string): string {
  return `${new Date(t).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A price per token as US dollars per `unit` tokens (e.g. a million); a dash for none. */
export function perUnit(costPerToken: number | null, unit: number): string {
  if (costPerToken === null || costPerToken === undefined) return '—';
  const v = costPerToken * unit;
  return `$${v.toLocaleString('en-US', { maximumFractionDigits: 4, minimumFractionDigits: 2 })}`;
}

/** A count of tokens, e.g. 128,000; a dash for none. */
export function count(n: number | null): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US');
}

/** An amount of US dollars: at least cents, and up to millionths (playground runs cost less than a cent). */
export function money(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

/** An amount of US dollars to the cent; a non-zero amount under a cent as "< $0.01". */
export function cents(usd: number): string {
  if (usd !== 0 && Math.abs(usd) < 0.01) return usd < 0 ? '> -$0.01' : '< $0.01';
  const s = Math.abs(usd).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return usd < 0 ? `-$${s}` : `$${s}`;
}

/** An amount of US dollars exactly as stored: up to 12 decimals (the CSV's figure). */
export function exactMoney(usd: number): string {
  const s = Math.abs(usd).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 12 });
  return usd < 0 ? `-$${s}` : `$${s}`;
}

/**
 * A team's, key's or person's name as the pages show it: a character that would not show as
 * itself (category Cc, Cf, Co, Cs or Cn: a control, the bidi override U+202E, a zero-width space,
 * private use, unassigned) written as its escape, `\u202E`, as `tollgate admin` shows it.
 */
export function shownName(name: string): string {
  return name.replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]/gu, (c) => {
    const cp = c.codePointAt(0) ?? 0;
    const hex = cp.toString(16).toUpperCase();
    return cp > 0xffff ? `\\U${hex.padStart(8, '0')}` : `\\u${hex.padStart(4, '0')}`;
  });
}

/** "an" before a role that starts with a vowel ("an admin"), "a" otherwise ("a viewer"). */
export function article(role: string): string {
  return /^[aeiou]/.test(role) ? 'an' : 'a';
}
