/**
 * Usage: credits remaining, reserved and the trial's end at a glance; try-ons
 * and credits per day as charts; the ledger.
 */
import type { Account, LedgerPage, Usage } from '../../client/index.ts';
import { call, plainWords } from '../api.ts';
import { h, replace, when } from '../dom.ts';
import { barChart } from '../charts.ts';
import type { Screen } from '../main.ts';

const DAYS = 14;
const LEDGER_WORDS: Record<string, string> = {
  trial: 'Trial credits',
  redeem: 'Voucher redeemed',
  reserve: 'Reserved for a try-on',
  capture: 'Spent on a try-on',
  release: 'Given back',
  expire: 'Expired',
  adjust: 'Adjustment',
};

/** `n thing` or `n things`. */
function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The period's totals in one sentence. */
export function totalsSentence(totals: Usage['totals']): string {
  return `${count(totals.submitted, 'try-on', 'try-ons')} started, ${totals.completed} done, ${totals.failed} failed, ${totals.canceled} canceled; ${count(totals.creditsUsed, 'credit', 'credits')} used.`;
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function stat(id: string, label: string, value: string, note?: string): HTMLElement {
  return h(
    'div',
    { class: 'stat', id },
    h('p', { class: 'stat-label' }, label),
    h('p', { class: 'stat-value' }, value),
    note && h('p', { class: 'hint' }, note),
  );
}

/**
 * What an entry did to the credits staff can use, with its sign: a reservation takes one (−1), a release gives
 * it back (+1), a capture spends the one already taken (0).
 */
function signedCredits(entry: { type: string; amount: number }): string {
  const effect = entry.type === 'reserve' || entry.type === 'expire' ? -entry.amount : entry.type === 'capture' ? 0 : entry.amount;
  return effect > 0 ? `+${effect}` : effect < 0 ? `−${-effect}` : '0';
}

/** The Usage screen. */
export const renderUsage: Screen = (root, info) => {
  const stats = h('div', { class: 'stats' }, h('p', { class: 'hint' }, 'Loading…'));
  const charts = h('div', { class: 'charts' });
  const ledger = h('div', { class: 'ledger' });
  replace(
    root,
    h('h1', {}, 'Usage'),
    stats,
    h('section', { class: 'panel' }, h('h2', {}, `The last ${DAYS} days (UTC)`), charts),
    h('section', { class: 'panel' }, h('h2', {}, 'Ledger'), ledger),
  );

  const today = new Date();
  const to = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1));
  const from = new Date(to.getTime() - DAYS * 86_400_000);

  call<Account>('GET', '/api/v1/account')
    .then((account) => {
      const trialDays = account.trialExpiresAt ? Math.ceil((Date.parse(account.trialExpiresAt) - Date.now()) / 86_400_000) : null;
      replace(
        stats,
        stat('credits-remaining', 'Credits remaining', String(account.creditsRemaining)),
        stat('credits-reserved', 'Reserved (try-ons in progress)', String(account.creditsReserved)),
        stat(
          'trial',
          'Trial credits',
          String(account.trialCreditsRemaining),
          account.trialExpiresAt
            ? trialDays !== null && trialDays > 0
              ? `Trial ends ${when(account.trialExpiresAt)} (in ${trialDays} days)`
              : `Trial ended ${when(account.trialExpiresAt)}`
            : 'No trial',
        ),
      );
    })
    .catch((error: unknown) => replace(stats, h('p', { class: 'error-box' }, plainWords(error))));

  call<Usage>('GET', `/api/v1/usage?from=${isoDay(from)}&to=${isoDay(to)}&granularity=day`)
    .then((usage) => {
      // Days in the shop's own words (the periods are UTC days, named as such).
      const labels = usage.periods.map((period) =>
        new Date(period.start).toLocaleDateString(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' }),
      );
      replace(
        charts,
        h('p', { class: 'totals', id: 'usage-totals' }, totalsSentence(usage.totals)),
        barChart('Try-ons per day', labels, [
          { label: 'Done', className: 'series-done', values: usage.periods.map((period) => period.completed) },
          { label: 'Failed', className: 'series-failed', values: usage.periods.map((period) => period.failed) },
          { label: 'Canceled', className: 'series-canceled', values: usage.periods.map((period) => period.canceled) },
        ]),
        barChart('Credits used per day', labels, [
          { label: 'Credits', className: 'series-credits', values: usage.periods.map((period) => period.creditsUsed) },
        ]),
      );
    })
    .catch((error: unknown) => replace(charts, h('p', { class: 'error-box' }, plainWords(error))));

  if (info.via === 'pin') {
    replace(ledger, h('p', { class: 'hint', id: 'ledger-admin-only' }, 'The ledger is the admin’s: sign in with the admin key to see it.'));
    return;
  }
  call<LedgerPage>('GET', '/api/v1/ledger?limit=50')
    .then((page) => {
      if (page.data.length === 0) {
        replace(ledger, h('p', { class: 'hint' }, 'No entries yet.'));
        return;
      }
      replace(
        ledger,
        h(
          'table',
          { class: 'table', id: 'ledger-table', tabindex: '0', 'aria-label': 'Ledger' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'When'),
              h('th', {}, 'What'),
              h('th', { class: 'num' }, 'Credits'),
              h('th', {}, 'Kind'),
              h('th', {}, 'Try-on'),
            ),
          ),
          h(
            'tbody',
            {},
            ...page.data.map((entry) =>
              h(
                'tr',
                {},
                h('td', {}, when(entry.at)),
                h('td', {}, LEDGER_WORDS[entry.type] ?? entry.type),
                h('td', { class: 'num' }, signedCredits(entry)),
                h('td', {}, entry.lot),
                h('td', { class: 'mono' }, entry.genId ?? ''),
              ),
            ),
          ),
        ),
        page.nextCursor && h('p', { class: 'hint' }, 'Showing the newest 50 entries.'),
      );
    })
    .catch((error: unknown) => replace(ledger, h('p', { class: 'error-box' }, plainWords(error))));
};
