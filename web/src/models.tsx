// The model catalogue as a searchable table: id and display name, endpoint kind, TEE/ZDR badges
// (with filters), prices per million tokens (input, cached input and output, then cache writes,
// audio and long-context tiers when configured) or per audio minute, and context and output limits;
// each id links to the model's own page (model.tsx).
import { useMemo, useState } from 'preact/hooks';
import { listModels, type Model } from './api';
import { count, perUnit } from './format';
import { Loading, useLoad } from './load';
import { modelPath } from './model';
import { OtherPrices, hasOtherPrices, perMillion } from './prices';

const AUDIO_ENDPOINT = 'transcription';

/** `onOpen(id)` gives the click handler of the link to `id`'s page. */
export function ModelsPage({ onOpen }: { onOpen: (id: string) => (e: MouseEvent) => void }) {
  const loaded = useLoad(() => listModels().then((r) => r.data), []);
  const models = loaded.data;
  const [query, setQuery] = useState('');
  const [teeOnly, setTeeOnly] = useState(false);
  const [zdrOnly, setZdrOnly] = useState(false);

  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return (models ?? []).filter(
      (m) =>
        (!teeOnly || m.tee) &&
        (!zdrOnly || m.zdr) &&
        (q === '' || [m.id, m.display_name, m.owned_by, m.endpoint].some((s) => s.toLowerCase().includes(q))),
    );
  }, [models, query, teeOnly, zdrOnly]);
  // A column for cache-write and audio prices and tiers, when a model has any.
  const more = shown.some(hasOtherPrices);

  return (
    <>
      <h1>Models</h1>
      <div class="filters">
        <label class="search">
          <span>Search</span>
          <input type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={teeOnly} onChange={(e) => setTeeOnly((e.target as HTMLInputElement).checked)} />
          TEE only
        </label>
        <label class="check">
          <input type="checkbox" checked={zdrOnly} onChange={(e) => setZdrOnly((e.target as HTMLInputElement).checked)} />
          ZDR only
        </label>
      </div>
      <Loading state={loaded} what="the models">
        {(models) => (
        <>
          <p class="muted" aria-live="polite">
            {shown.length} of {models.length} models
          </p>
          <div class="scroll" role="region" aria-label="Models" tabIndex={0}>
            <table class="models cards">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Security</th>
                  <th scope="col" class="num">
                    Input / 1M
                  </th>
                  <th scope="col" class="num">
                    Cached / 1M
                  </th>
                  <th scope="col" class="num">
                    Output / 1M
                  </th>
                  {more && <th scope="col">More prices / 1M</th>}
                  <th scope="col" class="num">
                    Context
                  </th>
                  <th scope="col" class="num">
                    Max output
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((m) => (
                  <tr key={m.id}>
                    <td data-label="Model">
                      <div>
                        <a href={modelPath(m.id)} onClick={onOpen(m.id)}>
                          <code>{m.id}</code>
                        </a>
                        {m.display_name !== m.id && <div class="muted">{m.display_name}</div>}
                      </div>
                    </td>
                    <td data-label="Endpoint">{m.endpoint}</td>
                    <td data-label="Security">
                      <span>
                        {m.tee && <span class="badge tee">TEE</span>}
                        {m.zdr && <span class="badge zdr">ZDR</span>}
                        {!m.tee && !m.zdr && <span class="muted">—</span>}
                      </span>
                    </td>
                    <Prices m={m} more={more} />
                    <td class="num" data-label="Context">{count(m.max_input_tokens || null)}</td>
                    <td class="num" data-label="Max output">{count(m.max_output_tokens || null)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p class="muted small">Prices in US dollars per million tokens, or per audio minute.</p>
        </>
        )}
      </Loading>
    </>
  );
}

function Prices({ m, more }: { m: Model; more: boolean }) {
  // Transcription models are priced per second of audio; the rest per token.
  if (m.endpoint === AUDIO_ENDPOINT) {
    return (
      <>
        <td class="num" data-label="Input">{perUnit(m.cost_per_audio_second, 60)} / min</td>
        <td class="num" data-label="Cached / 1M">—</td>
        <td class="num" data-label="Output">—</td>
        {more && <td data-label="More prices / 1M">—</td>}
      </>
    );
  }
  return (
    <>
      <td class="num" data-label="Input / 1M">{perMillion(m.input_cost_per_token)}</td>
      <td class="num" data-label="Cached / 1M" data-cached-price>
        {perMillion(m.cached_input_cost_per_token)}
      </td>
      <td class="num" data-label="Output / 1M">{perMillion(m.output_cost_per_token)}</td>
      {more && (
        <td data-label="More prices / 1M">
          <OtherPrices m={m} />
        </td>
      )}
    </>
  );
}
