// A secret shown once (a new key's secret, an invitation's link): a warning that it will not be
// shown again, the value with a copy button, and a button to go on. The heading takes the focus
// so that a screen reader announces it.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

interface Props {
  title: ComponentChildren;
  warning: string;
  value: string;
  what: string; // "secret", "link": in the copy confirmation
  copyLabel: string;
  doneLabel: string;
  valueData: Record<string, string>; // data- attributes of the value (what tests look for)
  onDone: () => void;
}

export function ShownOnce({ title, warning, value, what, copyLabel, doneLabel, valueData, onDone }: Props) {
  const [copied, setCopied] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [value]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <section class="secret" aria-labelledby="shown-once-title">
      <h2 id="shown-once-title" tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p class="warning">{warning}</p>
      <div class="row">
        <code class="secret-value" {...valueData}>
          {value}
        </code>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : copyLabel}
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied ? `The ${what} is on the clipboard.` : ''}
      </p>
      <button type="button" class="quiet" onClick={onDone}>
        {doneLabel}
      </button>
    </section>
  );
}
