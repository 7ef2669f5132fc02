// The console's frame: the header with the team switcher and sign-out, the navigation (only the
// pages the team's role may use, from `me`'s actions), and the page the path names. Pages are
// client-side routes under /console/; the gateway answers each with the same HTML shell. An
// invitation link (/console/invite?token=…) opened before signing in is kept in localStorage
// across the sign-in and opened again once signed in; so is the page a session that ended was on.
import { useEffect, useState } from 'preact/hooks';
import { loadMe, signOut, SIGN_IN, takeReturnTo, type Me, type Team } from './api';
import { AuditPage } from './audit';
import { CreateTeam } from './create_team';
import { shownName } from './format';
import { InvitePage, PENDING_INVITE, rememberInvite } from './invite';
import { KeysPage } from './keys';
import { Failed } from './load';
import { MODEL_PREFIX, ModelPage, modelPath } from './model';
import { ModelsPage } from './models';
import { PlaygroundPage } from './playground';
import { TeamPage } from './team';
import { UsagePage } from './usage';

interface PageInfo {
  path: string;
  title: string;
  /** The action the team's role needs for the page to be offered; none: every member. */
  action?: string;
  /** Shown without a team. */
  teamless?: boolean;
}

const PAGES: PageInfo[] = [
  { path: '/console/keys', title: 'API keys' },
  { path: '/console/models', title: 'Models', teamless: true },
  { path: '/console/playground', title: 'Playground', action: 'use_playground' },
  { path: '/console/usage', title: 'Usage', action: 'read_spend' },
  { path: '/console/team', title: 'Team', teamless: true },
  { path: '/console/audit', title: 'Audit log', action: 'read_audit' },
];
const INVITE = '/console/invite';

const TEAM_KEY = 'tollgate.team';

/** The page a path names (a model's page keeps its whole path); the keys page for /console/ and
 * anything unknown. */
function pageOf(pathname: string): string {
  if (pathname === INVITE) return INVITE;
  if (pathname.startsWith(MODEL_PREFIX) && pathname.length > MODEL_PREFIX.length) return pathname;
  const known = PAGES.find((p) => pathname === p.path || pathname === `${p.path}/`);
  return known ? known.path : PAGES[0].path;
}

/** The model id a model page's path names (as it was encoded by modelPath). */
function modelOf(path: string): string {
  const raw = path.slice(MODEL_PREFIX.length).replace(/\/$/, '');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Whether `team`'s role may see `page`. */
function offered(page: PageInfo, team: Team | undefined): boolean {
  if (!team) return page.teamless === true;
  return page.action === undefined || team.actions.includes(page.action);
}

export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [teamId, setTeamId] = useState<string>(() => sessionStorage.getItem(TEAM_KEY) ?? '');
  const [page, setPage] = useState(() => pageOf(location.pathname));

  const start = () => {
    setFailure(null);
    loadMe().then(
      (m) => {
        setMe(m);
        const back = takeReturnTo();
        // Signed in with an invitation opened before: open it now; else the page a session that
        // ended was on.
        if (location.pathname !== INVITE && localStorage.getItem(PENDING_INVITE)) navigate(INVITE, true);
        else if (back && pageOf(location.pathname) === PAGES[0].path && pageOf(back) !== PAGES[0].path) navigate(back, true);
      },
      (e: Error) => setFailure(e.message),
    );
  };
  useEffect(() => {
    if (location.pathname === INVITE && location.search) {
      rememberInvite(new URLSearchParams(location.search).get('token'));
      history.replaceState(null, '', INVITE);
    }
    start();
    const onPop = () => setPage(pageOf(location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    const section = page.startsWith(MODEL_PREFIX) ? '/console/models' : page;
    const title = page === INVITE ? 'Invitation' : (PAGES.find((p) => p.path === section)?.title ?? 'Console');
    document.title = `${title} · Tollgate`;
  }, [page]);

  if (failure) {
    return (
      <main id="main" class="page">
        <h1>Tollgate</h1>
        <Failed what="the console" error={failure} onRetry={start} />
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
  function navigate(path: string, replace = false) {
    if (replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
    setPage(pageOf(path));
    window.scrollTo(0, 0);
  }
  const go = (path: string) => (e: MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(path);
  };
  const chooseTeam = (id: string) => {
    sessionStorage.setItem(TEAM_KEY, id);
    setTeamId(id);
  };
  /** Reloads `me` (teams joined or made) and opens `teamId`'s team page. */
  const enterTeam = async (id: string) => {
    setMe(await loadMe());
    chooseTeam(id);
    navigate('/console/team');
  };
  const leave = async () => {
    await signOut().catch(() => undefined);
    window.location.assign(SIGN_IN);
  };

  const modelId = page.startsWith(MODEL_PREFIX) ? modelOf(page) : null;
  const section = modelId === null ? page : '/console/models';
  const info = PAGES.find((p) => p.path === section);
  const allowed = page === INVITE || (info !== undefined && offered(info, team));
  let body;
  if (page === INVITE) {
    body = <InvitePage me={me} onJoined={enterTeam} />;
  } else if (!allowed) {
    body = team ? (
      <Unavailable title={info?.title ?? 'Console'} team={team} />
    ) : (
      <NoTeam onCreated={enterTeam} />
    );
  } else if (modelId !== null) {
    body = <ModelPage id={modelId} onBack={go('/console/models')} />;
  } else if (page === '/console/models') {
    body = <ModelsPage onOpen={(id) => go(modelPath(id))} />;
  } else if (page === '/console/team') {
    body = team ? <TeamPage key={team.id} team={team} me={me} onCreated={enterTeam} /> : <NoTeam onCreated={enterTeam} />;
  } else if (team && page === '/console/playground') {
    body = <PlaygroundPage key={team.id} team={team} />;
  } else if (team && page === '/console/usage') {
    body = <UsagePage key={team.id} team={team} />;
  } else if (team && page === '/console/audit') {
    body = <AuditPage key={team.id} team={team} />;
  } else if (team) {
    body = <KeysPage key={team.id} team={team} me={me} />;
  } else {
    body = <NoTeam onCreated={enterTeam} />;
  }

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Tollgate</span>
        <nav aria-label="Console">
          <ul>
            {PAGES.filter((p) => offered(p, team)).map((p) => (
              <li key={p.path}>
                <a href={p.path} onClick={go(p.path)} aria-current={section === p.path ? 'page' : undefined}>
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
                    {shownName(t.name)} ({t.role})
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
        {body}
      </main>
    </>
  );
}

function NoTeam({ onCreated }: { onCreated: (teamId: string) => void }) {
  return (
    <>
      <h1>No team yet</h1>
      <p>
        You are not a member of any team yet. Open an invitation link from a team's owner or admin, or create a team
        of your own: you will be its owner. Its balance starts at zero until your operator tops it up.
      </p>
      <CreateTeam onCreated={onCreated} />
    </>
  );
}

function Unavailable({ title, team }: { title: string; team: Team }) {
  return (
    <>
      <h1>{title}</h1>
      <p>
        Your role in team <strong>{shownName(team.name)}</strong> ({team.role}) does not include this page.
      </p>
    </>
  );
}
