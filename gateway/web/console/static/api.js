/**
 * The gateway's API as the console calls it, with the token of this tab.
 *
 * The token lives in sessionStorage only: this tab, until it is closed or the
 * person forgets it. It travels in the User-Token header (the spelling proxies
 * keep; docs/api.md, "Conventions"), never in a URL, so it is in no address
 * bar, history entry, proxy log or access log. Queries go in a POST body.
 * No cookie is read or sent (credentials: 'omit').
 */

import { parseExact } from './json_stream.js';

const TOKEN_KEY = 'dbgateway.console.user_token';

export const tokenStore = {
  get() {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  },
  set(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  forget() {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

/** An answer other than success: the gateway's own code and message (docs/api.md, "Errors"). */
export class GatewayError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function request(method, path, { body = undefined, signal = undefined } = {}) {
  const headers = { 'User-Token': tokenStore.get(), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  });
}

/** The error an answer that is not 200 carries: the gateway's JSON body, or what a proxy in front said. */
export async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not the gateway's JSON: a proxy's page, a cut body. Its status is all that can be said.
  }
  if (body !== null && typeof body.error === 'string' && typeof body.message === 'string') {
    return new GatewayError(response.status, body.error, body.message);
  }
  return new GatewayError(response.status, 'http_' + response.status,
    `the server answered ${response.status} ${response.statusText} without the gateway's error body`);
}

async function getJson(path) {
  const response = await request('GET', path);
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/** ListTable: the local names of the tables granted to the token, sorted. */
export async function listTables() {
  const answer = await getJson('/Table/list');
  return answer.List;
}

/** GetTableData: a table's database, schema, name and columns ([name, type] in ordinal order). */
export async function describeTable(localName) {
  const response = await request('GET', '/Table?' + new URLSearchParams({ local_table_name: localName }));
  if (!response.ok) throw await errorOf(response);
  // parseExact keeps the columns in their order: JSON.parse would put columns named "1", "2" first.
  const data = parseExact(await response.text()).get('TableData');
  return {
    database: data.get('database_name'),
    folder: data.get('folder_name'),
    table: data.get('table_name'),
    columns: [...data.get('columns')],
  };
}

const DATA_PATHS = { json: '/GetData', csv: '/GetData/csv', ndjson: '/GetData/ndjson' };

/** GetData in one format; the Response when it is 200 (its body still to be read), else a GatewayError. */
export async function getData(format, database, query, signal) {
  const response = await request('POST', DATA_PATHS[format], {
    body: { local_database_name: database, query },
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  return response;
}
