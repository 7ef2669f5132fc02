// A model's prices beyond input and output, as the Models page and a model's own page show them:
// cache writes (5-minute and 1-hour), audio in and out, and long-context tiers, each only when the
// operator configured it; all per million tokens.
import type { Model, PriceTier } from './api';
import { count, perUnit } from './format';

export const MILLION = 1_000_000;

/** A price per million tokens; a dash for none. */
export const perMillion = (costPerToken: number | null | undefined) => perUnit(costPerToken ?? null, MILLION);

/** The configured prices of `m` besides input, cached input and output, as [label, price] pairs. */
export function otherPrices(m: Model): [string, string][] {
  const pairs: [string, number | undefined][] = [
    ['Cache write', m.cache_write_cost_per_token],
    ['1-hour cache write', m.cache_write_1h_cost_per_token],
    ['Audio input', m.input_audio_cost_per_token],
    ['Audio output', m.output_audio_cost_per_token],
  ];
  return pairs.filter((p): p is [string, number] => p[1] !== undefined).map(([label, v]) => [label, perMillion(v)]);
}

/** Whether `m` has a price besides input, cached input and output, or a long-context tier. */
export const hasOtherPrices = (m: Model) => otherPrices(m).length > 0 || (m.price_tiers ?? []).length > 0;

/** The other prices of `m` in a table's cell: a line each, and the tiers' thresholds; a dash for none. */
export function OtherPrices({ m }: { m: Model }) {
  const others = otherPrices(m);
  const tiers = m.price_tiers ?? [];
  if (!hasOtherPrices(m)) return <span class="muted">—</span>;
  return (
    <div>
      {others.map(([label, price]) => (
        <div key={label}>
          {label} {price}
        </div>
      ))}
      {tiers.length > 0 && (
        <div class="muted">
          Long-context {tiers.length === 1 ? 'tier' : 'tiers'} above {tiers.map((t) => count(t.above_input_tokens)).join(', ')}{' '}
          tokens
        </div>
      )}
    </div>
  );
}

/** The long-context tiers of a model: each one's prices per million tokens. */
export function Tiers({ tiers }: { tiers: PriceTier[] }) {
  return (
    <section aria-labelledby="tiers-title" class="section">
      <h2 id="tiers-title">Long-context prices</h2>
      <p class="muted small">
        A request whose input (uncached, cached and written) is above a tier's threshold has every token priced at the
        highest such tier.
      </p>
      <div class="scroll" role="region" aria-label="Long-context prices" tabIndex={0}>
        <table class="tiers cards">
          <thead>
            <tr>
              <th scope="col">Input above</th>
              {TIER_PRICES.map(([label]) => (
                <th key={label} scope="col" class="num">
                  {label} / 1M
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {tiers.map((t) => (
              <tr key={t.above_input_tokens}>
                <td data-label="Input above">{count(t.above_input_tokens)} tokens</td>
                {TIER_PRICES.map(([label, key]) => (
                  <td key={label} class="num" data-label={`${label} / 1M`}>
                    {perMillion(t[key])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

const TIER_PRICES: [string, Exclude<keyof PriceTier, 'above_input_tokens'>][] = [
  ['Input', 'input_cost_per_token'],
  ['Cached input', 'cached_input_cost_per_token'],
  ['Cache write', 'cache_write_cost_per_token'],
  ['1-hour cache write', 'cache_write_1h_cost_per_token'],
  ['Output', 'output_cost_per_token'],
];
