/**
 * Reading an answer: the table while it streams in, and the CSV and NDJSON files to download.
 *
 * The table reads GetData's JSON answer through fetch's ReadableStream, a piece
 * at a time as the network delivers it (the gateway streams an answer over
 * 256 KiB while the database still sends rows), and draws the rows after each
 * piece: the first rows are on screen long before a large answer ends.
 *
 * A download asks the same query again in that format (GetData/csv,
 * GetData/ndjson) and saves the body as a file. The token must travel in a
 * header, so the browser cannot fetch the file by itself from a link: the
 * body is read into a Blob in this tab's memory and saved from there. A body
 * that breaks off (the gateway cut it, docs/api.md) is an error, never a file.
 */
import { getData } from './api.js';
import { AnswerReader, IncompleteAnswer } from './json_stream.js';

/**
 * Run `query` on `database` into `table` (results.js); `onProgress(rowsSoFar)` after each piece.
 * Resolves to {rowCount, truncated, rowLimit}; rejects with a GatewayError, an IncompleteAnswer, or an
 * AbortError when `signal` stops it (the rows received stay on screen).
 */
export async function runIntoTable({ database, query, signal, table, onProgress }) {
  const response = await getData('json', database, query, signal);
  const rowLimit = response.headers.get('Dbgateway-Row-Limit');
  const reader = new AnswerReader({
    onColumns: (columns) => table.setColumns(columns),
    onRow: (values) => table.addRow(values),
  });
  const decoder = new TextDecoder();
  const stream = response.body.getReader();
  for (;;) {
    let piece;
    try {
      piece = await stream.read();
    } catch (error) {
      if (error.name === 'AbortError') throw error; // the person pressed Stop
      // The connection broke mid-answer (the gateway cut it, docs/api.md, or the network did).
      throw new IncompleteAnswer(`the connection broke after ${reader.rowsSeen} rows: ${error.message}`);
    }
    const { done, value } = piece;
    if (done) break;
    reader.push(decoder.decode(value, { stream: true }));
    table.draw();
    onProgress(reader.rowsSeen);
  }
  reader.push(decoder.decode());
  const end = reader.end(); // an IncompleteAnswer if the body broke off
  table.draw();
  return { rowCount: end.rowCount, truncated: end.truncated, rowLimit: rowLimit === null ? null : Number(rowLimit) };
}

const EXTENSIONS = { csv: 'csv', ndjson: 'ndjson' };

/** A file name without anything a file system or a person would trip on. */
function fileName(database, format) {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  const safe = database.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60) || 'result';
  return `${safe}-${stamp}.${EXTENSIONS[format]}`;
}

/**
 * Download `query`'s answer in `format` (csv or ndjson) as a file.
 * Resolves to {name, bytes, rowCount, truncated} (the counts when the gateway sent them in headers, else null).
 */
export async function download({ database, query, format }) {
  const response = await getData(format, database, query);
  const blob = await response.blob(); // rejects when the body broke off: nothing is saved then
  const name = fileName(database, format);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started the download from the URL; free the memory once it has certainly read it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  const count = response.headers.get('Dbgateway-Row-Count'); // sent only with an answer sent whole
  const truncated = response.headers.get('Dbgateway-Truncated');
  const counts = {
    rowCount: count === null ? null : Number(count),
    truncated: truncated === null ? null : truncated === 'true',
  };
  if (format === 'ndjson') Object.assign(counts, await ndjsonCounts(blob));
  return { name, bytes: blob.size, ...counts };
}

/** NDJSON's last line says the row count and whether the row limit cut the answer (docs/api.md). */
async function ndjsonCounts(blob) {
  const tail = await blob.slice(Math.max(0, blob.size - 256)).text();
  const last = tail.trimEnd().split('\n').pop();
  try {
    const counts = JSON.parse(last);
    return { rowCount: counts.row_count, truncated: counts.truncated };
  } catch {
    return {};
  }
}
