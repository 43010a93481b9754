/**
 * The console page: the token, the tables, the editor, the answer and the history, wired together.
 *
 * Everything the page shows comes from the gateway's API with the tab's token
 * (api.js); every message about a failure is the gateway's own (code and
 * message), which says what to change.
 */
import { GatewayError, tokenStore } from './api.js';
import { loadCatalogue, renderCatalogue } from './catalogue.js';
import { QueryHistory } from './history.js';
import { IncompleteAnswer } from './json_stream.js';
import { ResultTable } from './results.js';
import { SqlEditor } from './sql_editor.js';
import { download, runIntoTable } from './transfers.js';

const $ = (id) => document.getElementById(id);
const say = (id, text) => { $(id).textContent = text; };
const plural = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`;

let running = null; // the AbortController of the query being read, if any
let session = 0; // counts Forget presses: a query that ends after one writes nothing back (no history, no status)

const editor = new SqlEditor({ textarea: $('editor'), highlight: $('highlight'), gutter: $('gutter') });
const table = new ResultTable({
  wrap: $('table-wrap'), table: $('result'), more: $('more'),
  dialog: $('value-dialog'), dialogWhere: $('value-where'), dialogText: $('value-text'), dialogClose: $('value-close'),
});
const history = new QueryHistory({ list: $('history'), empty: $('history-empty'), onChoose: putInEditor });

function putInEditor(database, query) {
  if ([...$('database').options].some((option) => option.value === database)) $('database').value = database;
  editor.value = query;
  editor.focus();
}

function showError(error) {
  const box = $('error');
  if (error instanceof GatewayError) {
    const code = document.createElement('strong');
    code.textContent = error.code;
    box.replaceChildren(code, ': ', error.message);
  } else if (error instanceof IncompleteAnswer) {
    box.replaceChildren(`The answer broke off (${error.message}): the rows shown are not the whole answer.`
      + ' The gateway log says why; run the query again.');
  } else if (error.name === 'TypeError') {
    box.replaceChildren(`The gateway could not be reached (${error.message}).`);
  } else {
    box.replaceChildren(String(error.message || error));
  }
  box.hidden = false;
}

function clearMessages() {
  $('error').hidden = true;
  $('error').replaceChildren();
  $('cut').hidden = true;
  say('download-state', '');
}

// -- the token ------------------------------------------------------------------------------------------

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token').value.trim();
  $('token').value = ''; // the field never keeps it: only this tab's session storage does
  if (!token) {
    say('token-state', 'Paste a token first.');
    return;
  }
  tokenStore.set(token);
  showCatalogue();
});

$('forget').addEventListener('click', () => {
  session += 1;
  if (running) running.abort();
  tokenStore.forget();
  history.forget();
  table.reset();
  clearMessages();
  say('status', '');
  $('catalogue').replaceChildren();
  fillDatabases(new Map());
  say('catalogue-state', 'Paste a token to see the tables it may read.');
  say('token-state', 'Forgotten: this tab keeps no token, no history and no answer.');
  $('forget').disabled = true;
  $('token').focus();
});

function fillDatabases(databases) {
  const select = $('database');
  const before = select.value;
  const names = [...databases.keys()].filter((name) => name !== '');
  const options = names.map((name) => new Option(name, name));
  if (options.length === 0) options.push(new Option(tokenStore.get() ? '(no tables granted)' : '(no token yet)', ''));
  select.replaceChildren(...options);
  if (names.includes(before)) select.value = before;
}

async function showCatalogue() {
  if (!tokenStore.get()) {
    say('token-state', 'No token in this tab yet.');
    return;
  }
  say('token-state', 'A token is set for this tab.');
  $('forget').disabled = false;
  say('catalogue-state', 'Reading the tables…');
  try {
    const databases = await loadCatalogue();
    renderCatalogue($('catalogue'), databases, putInEditor);
    fillDatabases(databases);
    const tables = [...databases.values()].reduce((sum, list) => sum + list.length, 0);
    say('catalogue-state', tables === 0
      ? 'No table is granted to this token (a token the gateway does not know looks the same).'
      : `${plural(tables, 'table')} in ${plural(databases.size, 'database')}. Open a table for its columns.`);
  } catch (error) {
    say('catalogue-state', error instanceof GatewayError ? `${error.code}: ${error.message}` : String(error.message));
  }
}

// -- running a query -------------------------------------------------------------------------------------

/** The database and query to run, or null (with the reason shown) when something is missing. */
function request() {
  clearMessages();
  const database = $('database').value;
  const query = editor.value;
  const missing = !tokenStore.get() ? 'Paste a token first: this tab has none.'
    : !database ? 'Choose a database: the token has no table granted yet.'
      : !query.trim() ? 'Write a query first.' : null;
  if (missing) {
    showError(new Error(missing));
    return null;
  }
  return { database, query };
}

function setRunning(controller) {
  running = controller;
  $('run').disabled = controller !== null;
  $('stop').disabled = controller === null;
  $('table-wrap').setAttribute('aria-busy', String(controller !== null));
}

async function run() {
  if (running) return;
  const asked = request();
  if (asked === null) return;
  setRunning(new AbortController());
  table.reset();
  say('status', 'Running…');
  const started = session;
  let outcome;
  try {
    outcome = answered(await runIntoTable({
      ...asked, signal: running.signal, table, onProgress: (rows) => say('status', `Receiving… ${plural(rows, 'row')} so far.`),
    }));
  } catch (error) {
    outcome = failed(error);
  } finally {
    setRunning(null);
  }
  if (started !== session) {
    // Forget was pressed while it ran: the tab keeps nothing of this query, neither its answer nor its history.
    table.reset();
    clearMessages();
    say('status', '');
    return;
  }
  history.add(asked.database, asked.query, outcome);
}

/** Show a whole answer's count, and the mark when the row limit cut it; its outcome for the history. */
function answered(end) {
  let outcome = plural(end.rowCount, 'row');
  say('status', `${outcome}.`);
  if (end.truncated) {
    outcome += ', cut';
    $('cut').textContent = `Cut at the gateway's row limit (${end.rowLimit} rows): the query has more rows than`
      + ' these. Add a LIMIT or a narrower WHERE to read the rest in parts.';
    $('cut').hidden = false;
  }
  return outcome;
}

/** Show why a query did not give a whole answer (the rows received stay); its outcome for the history. */
function failed(error) {
  const received = plural(table.rows.length, 'row');
  if (error.name === 'AbortError') {
    say('status', `Stopped after ${received}: not the whole answer.`);
    return 'stopped';
  }
  say('status', table.rows.length ? `${received} received before the failure.` : '');
  showError(error);
  return error.code || 'broke off';
}

$('query-form').addEventListener('submit', (event) => {
  event.preventDefault();
  run();
});
$('query-form').addEventListener('keydown', (event) => {
  // Ctrl+Enter (Cmd+Enter on a Mac) runs the query from the editor or the database list.
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    run();
  }
});
$('stop').addEventListener('click', () => running && running.abort());

// -- downloads ----------------------------------------------------------------------------------------------

async function save(format, button) {
  const asked = request();
  if (asked === null) return;
  button.disabled = true;
  say('download-state', `Preparing the ${format.toUpperCase()} file…`);
  try {
    const saved = await download({ ...asked, format });
    const rows = saved.rowCount === null ? '' : `${plural(saved.rowCount, 'row')}, `;
    const cut = saved.truncated ? ' The answer was cut at the row limit; the file\'s last line says so.' : '';
    say('download-state', `Saved ${saved.name} (${rows}${saved.bytes} bytes).${cut}`);
  } catch (error) {
    say('download-state', '');
    showError(error);
  } finally {
    button.disabled = false;
  }
}

$('download-csv').addEventListener('click', (event) => save('csv', event.currentTarget));
$('download-ndjson').addEventListener('click', (event) => save('ndjson', event.currentTarget));

showCatalogue();
if (!tokenStore.get()) $('token').focus();
