/** History: recent try-ons with thumbnails, status, errors in plain words, and erase. */
import type { TryOn } from '../../client/index.ts';
import { call, plainWords } from '../api.ts';
import { h, replace, toast, when } from '../dom.ts';
import type { Screen } from '../main.ts';

const STATUS_WORDS: Record<TryOn['status'], string> = {
  pending: 'In progress',
  complete: 'Done',
  failed: 'Failed',
  canceled: 'Canceled',
};

/** The History screen. */
export const renderHistory: Screen = (root) => {
  const list = h('div', { class: 'history-list', id: 'history-list' });
  const more = h('button', { type: 'button', class: 'button', hidden: true }, 'Show older');
  let cursor: string | null = null;

  const row = (view: TryOn): HTMLElement => {
    const thumb =
      view.status === 'complete' && !view.erased
        ? h('img', { src: `/api/v1/try-on/${view.genId}/image`, alt: 'Try-on result', class: 'thumb', loading: 'lazy' })
        : h('div', { class: 'thumb thumb-empty', 'aria-hidden': 'true' }, view.erased ? 'Erased' : '—');
    const item: HTMLElement = h(
      'article',
      { class: 'history-item', 'data-gen': view.genId },
      thumb,
      h(
        'div',
        { class: 'history-text' },
        h('p', {}, h('span', { class: `badge badge-${view.status}` }, STATUS_WORDS[view.status]), ' ', when(view.createdAt)),
        view.error && h('p', { class: 'error-text' }, plainWords(view.error)),
        h(
          'p',
          { class: 'hint' },
          `${view.engine} · ${view.creditCharged ? '1 credit' : 'no credit charged'}${view.erased ? ' · photos erased' : ''}`,
        ),
      ),
      !view.erased &&
        h(
          'button',
          {
            type: 'button',
            class: 'button danger small',
            onclick: async () => {
              try {
                await call('DELETE', `/api/v1/try-on/${view.genId}`);
                item.replaceWith(row({ ...view, erased: true, status: view.status === 'pending' ? 'canceled' : view.status }));
                toast('The photos of that try-on are erased.');
              } catch (error) {
                toast(plainWords(error), 'error');
              }
            },
          },
          'Erase photos',
        ),
    );
    return item;
  };

  const load = async (): Promise<void> => {
    try {
      const page = await call<{ data: TryOn[]; nextCursor: string | null }>(
        'GET',
        `/api/v1/try-on?limit=20${cursor ? `&cursor=${cursor}` : ''}`,
      );
      if (!cursor && page.data.length === 0) replace(list, h('p', { class: 'hint' }, 'No try-ons yet.'));
      else list.append(...page.data.map(row));
      cursor = page.nextCursor;
      more.hidden = cursor === null;
    } catch (error) {
      list.append(h('p', { class: 'error-box' }, plainWords(error)));
    }
  };
  more.onclick = () => void load();
  replace(
    root,
    h(
      'section',
      { class: 'panel' },
      h('h1', {}, 'History'),
      h('p', { class: 'hint' }, 'Newest first. Photos are kept for a limited time, then removed.'),
      list,
      more,
    ),
  );
  void load();
};
