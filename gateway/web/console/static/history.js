/**
 * The tab's last queries, newest first, kept in sessionStorage beside the token (and forgotten with it).
 *
 * Each entry is the database, the query text and how it ended ("12 rows",
 * "query_rejected"). Choosing one puts it back in the editor; it does not run
 * it, so a person sees what will run before it does.
 */

const HISTORY_KEY = 'dbgateway.console.history';
export const KEPT = 20;

export class QueryHistory {
  /** @param {{list: HTMLElement, empty: HTMLElement, onChoose: function(string, string)}} parts */
  constructor({ list, empty, onChoose }) {
    this.list = list;
    this.empty = empty;
    this.onChoose = onChoose;
    this.draw();
  }

  entries() {
    try {
      const kept = JSON.parse(sessionStorage.getItem(HISTORY_KEY) || '[]');
      const fields = ['database', 'query', 'outcome', 'at'];
      // Only entries this version wrote: another version's (or a hand-edited) entry is left out, not drawn wrong.
      return Array.isArray(kept) ? kept.filter((e) => e && fields.every((f) => typeof e[f] === 'string')) : [];
    } catch {
      return []; // written by another version of the console: start again
    }
  }

  /** Note a query that ran; the same text on the same database moves to the top instead of repeating. */
  add(database, query, outcome) {
    const entries = this.entries().filter((entry) => entry.database !== database || entry.query !== query);
    entries.unshift({ database, query, outcome, at: new Date().toISOString() });
    sessionStorage.setItem(HISTORY_KEY, JSON.stringify(entries.slice(0, KEPT)));
    this.draw();
  }

  forget() {
    sessionStorage.removeItem(HISTORY_KEY);
    this.draw();
  }

  draw() {
    const items = this.entries().map((entry) => this.item(entry));
    this.list.replaceChildren(...items);
    this.empty.hidden = items.length > 0;
  }

  item(entry) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'history-entry';
    const query = document.createElement('span');
    query.className = 'history-query';
    query.textContent = entry.query.trim().split('\n', 1)[0];
    const meta = document.createElement('span');
    meta.className = 'history-meta';
    meta.textContent = `${entry.database} · ${entry.outcome} · ${entry.at.slice(11, 19)} UTC`;
    button.append(query, meta);
    button.title = entry.query;
    button.setAttribute('aria-label', `Put back in the editor: ${entry.query} (${entry.database}, ${entry.outcome})`);
    button.addEventListener('click', () => this.onChoose(entry.database, entry.query));
    item.append(button);
    return item;
  }
}
