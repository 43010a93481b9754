/**
 * The SQL editor: a plain textarea, with line numbers beside it and the highlighted text drawn under it.
 *
 * The textarea stays the real control (the browser's editing, selection,
 * undo, spelling off, its label read by screen readers); its text is
 * transparent and a <pre> behind it shows the same text in colour, built from
 * sql_tokens.js as spans whose text is set with textContent. Both use the same
 * font, padding and no wrapping (wrap="off"), so each line of the gutter is one
 * line of the text, and the <pre> follows the textarea's scrolling.
 *
 * Tab is left to the browser (it moves the focus out: the page is usable with
 * the keyboard alone); Ctrl+Enter or Cmd+Enter, which runs the query, is the
 * query form's (main.js), so it works from the database list too.
 */
import { tokenize } from './sql_tokens.js';

export class SqlEditor {
  /**
   * @param {{textarea: HTMLTextAreaElement, highlight: HTMLElement, gutter: HTMLElement}} parts
   */
  constructor({ textarea, highlight, gutter }) {
    this.textarea = textarea;
    this.highlight = highlight;
    this.gutter = gutter;
    this.lines = 0;
    this.pending = false;
    textarea.addEventListener('input', () => this.scheduleDraw());
    textarea.addEventListener('scroll', () => this.followScroll());
    this.draw();
  }

  get value() {
    return this.textarea.value;
  }

  /** Replace the text (a table's query, a query from the history) and put the caret at its end. */
  set value(text) {
    this.textarea.value = text;
    this.textarea.setSelectionRange(text.length, text.length);
    this.draw();
  }

  focus() {
    this.textarea.focus();
  }

  /** Typing fast redraws once per frame, not once per key. */
  scheduleDraw() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  draw() {
    const text = this.textarea.value;
    const pieces = document.createDocumentFragment(); // one insertion, however many tokens
    for (const token of tokenize(text)) {
      if (token.type === 'space' || token.type === 'other' || token.type === 'word') {
        pieces.append(token.text);
      } else {
        const span = document.createElement('span');
        span.className = 'sql-' + token.type;
        span.textContent = token.text;
        pieces.append(span);
      }
    }
    // A <pre> does not show a last empty line; the textarea does. One more line break keeps them level.
    pieces.append('\n');
    this.highlight.replaceChildren(pieces);
    const lines = text.split('\n').length;
    if (lines !== this.lines) {
      this.lines = lines;
      this.gutter.textContent = Array.from({ length: lines }, (_, index) => String(index + 1)).join('\n') + '\n';
    }
    this.followScroll();
  }

  followScroll() {
    this.highlight.scrollTop = this.textarea.scrollTop;
    this.highlight.scrollLeft = this.textarea.scrollLeft;
    this.gutter.scrollTop = this.textarea.scrollTop;
  }
}
