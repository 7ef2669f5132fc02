// Newer/Older over a listing's pages: `cursors` is the trail of cursors that led to the page
// shown (empty: the newest page), `next` the page's next_cursor (null: the oldest page).
interface Props {
  cursors: string[];
  next: string | null | undefined;
  onChange: (cursors: string[]) => void;
}

export function Pager({ cursors, next, onChange }: Props) {
  return (
    <div class="row pager">
      <button type="button" class="quiet small" disabled={cursors.length === 0} onClick={() => onChange(cursors.slice(0, -1))}>
        Newer
      </button>
      <button type="button" class="quiet small" disabled={!next} onClick={() => next && onChange([...cursors, next])}>
        Older
      </button>
    </div>
  );
}
