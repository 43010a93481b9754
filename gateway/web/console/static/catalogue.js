/**
 * What the token may read: its tables grouped by database, each with its columns and their types.
 *
 * Built from the two operations any client has: ListTable (/Table/list) for
 * the granted names, then GetTableData (/Table) for each, a few at a time, to
 * learn its database, schema and columns. A table that cannot be described
 * (dropped since it was registered, its database down) is listed with the
 * gateway's message instead of its columns.
 */
import { describeTable, listTables } from './api.js';
import { quoteIdentifier } from './sql_tokens.js';

const AT_ONCE = 4; // descriptions asked at once: quick for a few dozen tables, gentle with the gateway's pools

/** The tables by database: Map(database -> [{name, folder, table, columns, error}]) sorted by name. */
export async function loadCatalogue() {
  const names = await listTables();
  const described = new Array(names.length);
  let next = 0;
  async function worker() {
    while (next < names.length) {
      const index = next++;
      try {
        described[index] = { name: names[index], ...(await describeTable(names[index])) };
      } catch (error) {
        if (error.name === 'TypeError') throw error; // the gateway is not reachable: no use asking on
        described[index] = { name: names[index], error };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, names.length) }, worker));
  const databases = new Map();
  for (const table of described) {
    const database = table.error ? '' : table.database;
    if (!databases.has(database)) databases.set(database, []);
    databases.get(database).push(table);
  }
  return new Map([...databases].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A first query over a table, its names written as SQL needs them. */
export function firstQuery(table) {
  return `SELECT *\nFROM ${quoteIdentifier(table.folder)}.${quoteIdentifier(table.table)}\nLIMIT 100`;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Draw the catalogue into `container`; `onQuery(database, sql)` when a table's "Query" button is used.
 * Native <details> elements: each table opens with Enter or Space, and the page stays usable by keyboard.
 */
export function renderCatalogue(container, databases, onQuery) {
  const sections = [];
  for (const [database, tables] of databases) {
    const section = element('section', 'database');
    section.append(element('h3', 'database-name', database || 'Not described'));
    const list = element('ul', 'tables');
    for (const table of tables) list.append(tableItem(database, table, onQuery));
    section.append(list);
    sections.push(section);
  }
  container.replaceChildren(...sections);
}

function tableItem(database, table, onQuery) {
  const item = element('li', 'table');
  const details = element('details');
  const summary = element('summary');
  summary.append(element('span', 'table-name', table.name));
  if (!table.error) summary.append(' ', element('span', 'table-path', `${table.folder}.${table.table}`));
  details.append(summary);
  if (table.error) {
    details.append(element('p', 'error-text', `${table.error.code}: ${table.error.message}`));
  } else {
    const columns = element('ul', 'columns');
    columns.setAttribute('aria-label', `Columns of ${table.name}`);
    for (const [name, type] of table.columns) {
      const column = element('li');
      column.append(element('span', 'column-name', name), ' ', element('span', 'column-type', type));
      columns.append(column);
    }
    const query = element('button', 'query-table', 'Query this table');
    query.type = 'button';
    query.setAttribute('aria-label', `Query ${table.name}`);
    query.addEventListener('click', () => onQuery(database, firstQuery(table)));
    details.append(columns, query);
  }
  item.append(details);
  return item;
}
