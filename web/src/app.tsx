// The console's frame: the header with the team switcher and sign-out, the navigation, and the
// page the path names (/console/keys, /console/models). Pages are client-side routes under
// /console/; the gateway answers each with the same HTML shell.
import { useEffect, useState } from 'preact/hooks';
import { loadMe, signOut, SIGN_IN, type Me, type Team } from './api';
import { KeysPage } from './keys';
import { ModelsPage } from './models';

const PAGES = [
  { path: '/console/keys', title: 'API keys' },
  { path: '/console/models', title: 'Models' },
] as const;

const TEAM_KEY = 'tollgate.team';

/** The page a path names; the keys page for /console/ and anything unknown. */
function pageOf(pathname: string): string {
  const known = PAGES.find((p) => pathname === p.path || pathname === `${p.path}/`);
  return known ? known.path : PAGES[0].path;
}

export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [teamId, setTeamId] = useState<string>(() => sessionStorage.getItem(TEAM_KEY) ?? '');
  const [page, setPage] = useState(() => pageOf(location.pathname));

  useEffect(() => {
    loadMe().then(setMe, (e: Error) => setFailure(e.message));
    const onPop = () => setPage(pageOf(location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    const title = PAGES.find((p) => p.path === page)?.title ?? 'Console';
    document.title = `${title} · Tollgate`;
  }, [page]);

  if (failure) {
    return (
      <main id="main" class="page">
        <h1>Tollgate</h1>
        <p role="alert" class="error">The console could not load: {failure}</p>
      </main>
    );
  }
  if (!me) {
    return (
      <main id="main" class="page" aria-busy="true">
        <p class="muted">Loading…</p>
      </main>
    );
  }

  const team: Team | undefined = me.teams.find((t) => t.id === teamId) ?? me.teams[0];
  const go = (path: string) => (e: MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    history.pushState(null, '', path);
    setPage(path);
  };
  const chooseTeam = (id: string) => {
    sessionStorage.setItem(TEAM_KEY, id);
    setTeamId(id);
  };
  const leave = async () => {
    await signOut().catch(() => undefined);
    window.location.assign(SIGN_IN);
  };

  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">Tollgate</span>
        <nav aria-label="Console">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <a href={p.path} onClick={go(p.path)} aria-current={page === p.path ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {me.teams.length > 0 && (
            <label class="team">
              <span>Team</span>
              <select value={team?.id} onChange={(e) => chooseTeam((e.target as HTMLSelectElement).value)}>
                {me.teams.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name} ({t.role})
                  </option>
                ))}
              </select>
            </label>
          )}
          <span class="email">{me.user.email}</span>
          <button type="button" class="quiet" onClick={leave}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        {page === '/console/models' ? (
          <ModelsPage />
        ) : team ? (
          <KeysPage key={team.id} team={team} me={me} />
        ) : (
          <NoTeam />
        )}
      </main>
    </>
  );
}

function NoTeam() {
  return (
    <>
      <h1>API keys</h1>
      <p>You are not a member of any team yet. Open an invitation link from a team's owner, or ask your operator to add you.</p>
    </>
  );
}
