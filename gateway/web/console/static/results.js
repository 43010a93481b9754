/**
 * The answer as a table, drawn while its rows arrive.
 *
 * Each value is written with textContent: whatever a value holds (<script>,
 * <img onerror>, javascript:) is shown as the characters it is, and the page's
 * Trusted Types policy makes the browser refuse HTML from a string anyway.
 * NULL is a marked cell (class "null", the word in italics and a dotted frame),
 * apart from the text 'NULL'. Columns of numeric types are aligned right. A
 * value longer than SHORT (60) characters or of several lines is shortened, with a
 * button that opens it whole in a dialog.
 *
 * At most PAGE rows are drawn at first, and PAGE more each time "Show more
 * rows" is pressed: a page with 100 000 table rows would be slow to use. All
 * rows received are kept, so every one can be shown.
 */
import { isNumericType, textOf, wholeTextOf } from './values.js';

export const PAGE = 500;
export const SHORT = 60;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class ResultTable {
  /** @param {{wrap, table, more, dialog, dialogWhere, dialogText, dialogClose}} parts */
  constructor(parts) {
    this.parts = parts;
    this.head = parts.table.tHead;
    this.body = parts.table.tBodies[0];
    this.columns = [];
    this.rows = [];
    this.drawn = 0;
    this.limit = PAGE;
    parts.more.addEventListener('click', () => this.showMore());
    parts.dialogClose.addEventListener('click', () => parts.dialog.close());
  }

  /** Empty the table for a new answer. */
  reset() {
    this.columns = [];
    this.rows = [];
    this.drawn = 0;
    this.limit = PAGE;
    this.head.replaceChildren();
    this.body.replaceChildren();
    this.parts.wrap.hidden = true;
    this.parts.more.hidden = true;
  }

  setColumns(columns) {
    this.columns = columns.map((column) => ({ ...column, numeric: isNumericType(column.type) }));
    const row = element('tr');
    for (const column of this.columns) {
      const cell = element('th', column.numeric ? 'num' : '');
      cell.scope = 'col';
      cell.append(element('span', 'column-name', column.name), element('span', 'column-type', column.type));
      row.append(cell);
    }
    this.head.replaceChildren(row);
    this.parts.wrap.hidden = false;
  }

  /** Keep a row; it is drawn by the next draw() if the page has room for it. */
  addRow(values) {
    this.rows.push(values);
  }

  /** Draw the rows received since the last call, up to the rows shown so far. */
  draw() {
    const until = Math.min(this.rows.length, this.limit);
    if (until > this.drawn) {
      const fragment = document.createDocumentFragment();
      for (let index = this.drawn; index < until; index += 1) fragment.append(this.rowElement(index));
      this.body.append(fragment);
      this.drawn = until;
    }
    const hidden = this.rows.length - this.drawn;
    this.parts.more.hidden = hidden === 0;
    this.parts.more.textContent = `Show ${Math.min(PAGE, hidden)} more rows (${hidden} not shown)`;
  }

  showMore() {
    this.limit += PAGE;
    this.draw();
  }

  rowElement(index) {
    const row = element('tr');
    const values = this.rows[index];
    this.columns.forEach((column, position) => row.append(this.cell(values[position], column, index)));
    return row;
  }

  cell(value, column, index) {
    const cell = element('td', column.numeric ? 'num' : '');
    if (value === null) {
      cell.append(element('span', 'null', 'NULL'));
      cell.title = 'SQL NULL (no value)';
      return cell;
    }
    const text = textOf(value);
    const firstLine = text.split('\n', 1)[0];
    if (firstLine.length === text.length && text.length <= SHORT) {
      cell.textContent = text;
      return cell;
    }
    cell.append(element('span', 'short', firstLine.slice(0, SHORT) + '…'));
    const whole = element('button', 'whole', 'whole');
    whole.type = 'button';
    whole.setAttribute('aria-label', `Show the whole value of ${column.name} in row ${index + 1} (${text.length} characters)`);
    whole.addEventListener('click', () => this.showWhole(value, column, index));
    cell.append(' ', whole);
    return cell;
  }

  showWhole(value, column, index) {
    const { dialog, dialogWhere, dialogText, dialogClose } = this.parts;
    const text = wholeTextOf(value);
    dialogWhere.textContent = `Column ${column.name} (${column.type}), row ${index + 1}: ${text.length} characters.`;
    dialogText.textContent = text;
    dialog.showModal(); // Escape closes it; the focus returns to the button that opened it
    dialogClose.focus();
  }
}
