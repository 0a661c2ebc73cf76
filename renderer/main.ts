/**
 * The shop-floor GUI: signs in (the Electron shell's token, else an admin key
 * or the staff PIN), then shows one screen at a time, chosen by the URL's
 * hash so that the browser's back button works.
 */
import type { SessionInfo } from '../server/gui/contract.ts';
import { call, setCsrfToken, whenSignedOut } from './api.ts';
import { h, replace } from './dom.ts';
import { shellLaunchToken } from './shell.ts';
import { renderSignIn } from './views/sign-in.ts';
import { renderTryOn } from './views/try-on.ts';
import { renderCatalogue } from './views/catalogue.ts';
import { renderHistory } from './views/history.ts';
import { renderUsage } from './views/usage.ts';
import { renderSettings } from './views/settings.ts';

/** A screen draws itself into `root` and returns what to do when it is left. */
export type Screen = (root: HTMLElement, session: SessionInfo) => (() => void) | void;

const SCREENS: { id: string; label: string; render: Screen }[] = [
  { id: 'try-on', label: 'Try on', render: renderTryOn },
  { id: 'catalogue', label: 'Catalogue', render: renderCatalogue },
  { id: 'history', label: 'History', render: renderHistory },
  { id: 'usage', label: 'Usage', render: renderUsage },
  { id: 'settings', label: 'Settings', render: renderSettings },
];

const app = document.getElementById('app')!;
let leave: (() => void) | void = undefined;

/** A counter left alone this long locks: staff signed in with the PIN are signed out. */
export const IDLE_LOCK_MS = 5 * 60_000;
let stopIdleLock: (() => void) | null = null;

/** Signs a PIN session out after IDLE_LOCK_MS with no touch, key or pointer, so the next person needs the PIN. */
function lockWhenIdle(signOut: () => void): () => void {
  let timer = setTimeout(signOut, IDLE_LOCK_MS);
  const active = (): void => {
    clearTimeout(timer);
    timer = setTimeout(signOut, IDLE_LOCK_MS);
  };
  const events = ['pointerdown', 'keydown', 'wheel', 'touchstart'] as const;
  for (const event of events) window.addEventListener(event, active, { passive: true });
  return () => {
    clearTimeout(timer);
    for (const event of events) window.removeEventListener(event, active);
  };
}

async function session(): Promise<SessionInfo> {
  return call<SessionInfo>('GET', '/gui/api/session');
}

async function start(): Promise<void> {
  let info = await session();
  if (!info.signedIn && info.shell) {
    const token = await shellLaunchToken();
    if (token) {
      await call('POST', '/gui/api/session', { method: 'shell', token }).catch(() => undefined);
      info = await session();
    }
  }
  if (!info.signedIn) {
    leave?.();
    stopIdleLock?.();
    stopIdleLock = null;
    renderSignIn(app, info, () => void start());
    return;
  }
  setCsrfToken(info.csrfToken ?? '');
  showApp(info);
}

function showApp(info: SessionInfo): void {
  stopIdleLock?.();
  stopIdleLock = null;
  if (info.via === 'pin') {
    stopIdleLock = lockWhenIdle(() => {
      void call('DELETE', '/gui/api/session')
        .catch(() => undefined)
        .then(() => {
          setCsrfToken('');
          void start();
        });
    });
  }
  const main = h('main', { id: 'screen', tabindex: '-1' });
  const links = SCREENS.map((screen) => h('a', { href: `#/${screen.id}`, class: 'nav-link', 'data-screen': screen.id }, screen.label));
  const signOut = h(
    'button',
    {
      class: 'button quiet',
      type: 'button',
      onclick: async () => {
        stopIdleLock?.();
        stopIdleLock = null;
        await call('DELETE', '/gui/api/session').catch(() => undefined);
        setCsrfToken('');
        location.hash = '#/try-on';
        void start();
      },
    },
    'Sign out',
  );
  replace(
    app,
    h(
      'header',
      { class: 'topbar' },
      h('span', { class: 'brand' }, 'fittingroom'),
      h('nav', { 'aria-label': 'Screens' }, ...links),
      signOut,
    ),
    main,
  );
  const show = (): void => {
    const id = location.hash.replace(/^#\//, '') || 'try-on';
    const screen = SCREENS.find((candidate) => candidate.id === id) ?? SCREENS[0]!;
    for (const link of links) {
      if (link.dataset.screen === screen.id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    leave?.();
    main.replaceChildren();
    document.title = `${screen.label} · fittingroom`;
    leave = screen.render(main, info);
    main.focus({ preventScroll: true });
  };
  window.onhashchange = show;
  show();
}

whenSignedOut(() => void start());
start().catch((error: unknown) => {
  replace(app, h('p', { class: 'error-box' }, `The appliance cannot be reached (${String(error)}). Reload the page to try again.`));
});
