import { javascript } from '@codemirror/lang-javascript';
import { json } from '@codemirror/lang-json';
import { markdown } from '@codemirror/lang-markdown';
import { python } from '@codemirror/lang-python';
import type { Extension } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import { basicSetup, EditorView } from 'codemirror';

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const tree = byId('tree');
const pathLabel = byId('path');
const saveButton = byId<HTMLButtonElement>('save');
const renameButton = byId<HTMLButtonElement>('rename');
const deleteButton = byId<HTMLButtonElement>('delete');
const status = byId('status');
const ask = byId<HTMLFormElement>('ask');
const askLabel = byId('ask-label');
const askInput = byId<HTMLInputElement>('ask-input');
const askOk = byId<HTMLButtonElement>('ask-ok');
let openPath: string | undefined;
let view: EditorView | undefined;
/** Folders open in the list, kept open when it is drawn again after a change. */
const expanded = new Set<string>();

const api = (what: string, path: string, extra = '') =>
  `/_svc/api/${what}?path=${encodeURIComponent(path)}${extra}`;

function language(path: string): Extension[] {
  if (/\.(c|m)?[jt]sx?$/.test(path))
    return [javascript({ typescript: /\.(c|m)?tsx?$/.test(path), jsx: /x$/.test(path) })];
  if (path.endsWith('.json')) return [json()];
  if (/\.(md|markdown)$/.test(path)) return [markdown()];
  if (path.endsWith('.py')) return [python()];
  return [];
}

function say(text: string, bad = false) {
  status.textContent = text;
  status.classList.toggle('bad', bad);
}

/** The gateway's reason for a refusal: the envelope's `detail`, else its code. */
async function reason(res: Response): Promise<string> {
  const body = (await res.json().catch(() => ({}))) as { error?: string; detail?: string };
  return body.detail ?? body.error ?? `HTTP ${res.status}`;
}

async function save() {
  if (!openPath || !view) return;
  say('Saving…');
  const res = await fetch(api('file', openPath), {
    method: 'PUT',
    body: view.state.doc.toString(),
  });
  if (res.ok) say('Saved');
  else say(`Not saved: ${await reason(res)}`, true);
}

function show(path: string | undefined, content = '') {
  openPath = path;
  pathLabel.textContent = path ?? 'No file open';
  for (const button of [saveButton, renameButton, deleteButton]) button.disabled = !path;
  for (const item of Array.from(tree.querySelectorAll<HTMLElement>('button[data-kind="file"]'))) {
    item.setAttribute('aria-current', String(item.dataset.path === path));
  }
  view?.destroy();
  view = undefined;
  if (!path) return;
  view = new EditorView({
    doc: content,
    parent: byId('editor'),
    extensions: [
      basicSetup,
      ...language(path),
      keymap.of([
        {
          key: 'Mod-s',
          preventDefault: true,
          run: () => {
            void save();
            return true;
          },
        },
      ]),
    ],
  });
}

async function open(path: string) {
  say('Opening…');
  const res = await fetch(api('file', path));
  if (!res.ok) return say(`Cannot open: ${await reason(res)}`, true);
  const { content } = (await res.json()) as { content: string };
  show(path, content);
  say('');
}

async function list(dir: string, into: HTMLElement, depth: number) {
  const res = await fetch(api('tree', dir));
  if (!res.ok) return say(`Cannot list ${dir || 'the home'}: ${await reason(res)}`, true);
  const { entries } = (await res.json()) as { entries: { name: string; kind: 'dir' | 'file' }[] };
  for (const entry of entries) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    const item = document.createElement('button');
    item.type = 'button';
    item.style.paddingLeft = `${depth + 0.25}rem`;
    item.dataset.path = path;
    item.dataset.kind = entry.kind;
    item.title = path;
    into.append(item);
    if (entry.kind === 'file') {
      item.textContent = entry.name;
      item.setAttribute('aria-current', String(path === openPath));
      item.addEventListener('click', () => void open(path));
      continue;
    }
    const children = document.createElement('div');
    into.append(children);
    const draw = (isOpen: boolean) => {
      item.setAttribute('aria-expanded', String(isOpen));
      item.textContent = `${isOpen ? '▾' : '▸'} ${entry.name}`;
    };
    draw(expanded.has(path));
    if (expanded.has(path)) await list(path, children, depth + 1);
    item.addEventListener('click', () => {
      const isOpen = !expanded.has(path);
      if (isOpen) expanded.add(path);
      else expanded.delete(path);
      draw(isOpen);
      if (isOpen) void list(path, children, depth + 1);
      else children.replaceChildren();
    });
  }
}

async function refresh() {
  const fresh = document.createElement('div');
  await list('', fresh, 0);
  tree.replaceChildren(...Array.from(fresh.childNodes));
}

/**
 * The one question the bar asks at a time (a file's name, or whether to delete it), inline
 * rather than in a browser dialog; `answer` runs on OK and says whether the form may close.
 */
let answer: ((value: string) => Promise<boolean>) | undefined;

function question(label: string, ok: string, value: string | undefined, then: typeof answer) {
  askLabel.textContent = label;
  askOk.textContent = ok;
  askOk.classList.toggle('danger', ok === 'Delete');
  askOk.classList.toggle('primary', ok !== 'Delete');
  askInput.hidden = value === undefined;
  askInput.value = value ?? '';
  answer = then;
  ask.hidden = false;
  (value === undefined ? askOk : askInput).focus();
}

function closeQuestion() {
  ask.hidden = true;
  answer = undefined;
}

/** Sends a change to the home (`what` it is, e.g. Rename); on refusal says why, answers false. */
async function change(what: string, method: string, url: string, done: string) {
  const res = await fetch(url, { method });
  if (!res.ok) {
    say(`${what} failed: ${await reason(res)}`, true);
    return false;
  }
  say(done);
  return true;
}

/** Where a new file goes by default: beside the open one, else in the home. */
const folderOf = (path: string | undefined) =>
  path?.includes('/') ? `${path.slice(0, path.lastIndexOf('/'))}/` : '';

byId('new').addEventListener('click', () =>
  question('New file (path in the home)', 'Create', folderOf(openPath), async (value) => {
    const path = value.trim().replace(/^\/+/, '');
    if (!path) return false;
    if (!(await change('Create', 'POST', api('file', path), `Created ${path}`))) return false;
    for (let i = path.indexOf('/'); i > 0; i = path.indexOf('/', i + 1))
      expanded.add(path.slice(0, i));
    await refresh();
    await open(path);
    say(`Created ${path}`);
    return true;
  }),
);

renameButton.addEventListener('click', () => {
  const from = openPath;
  if (!from) return;
  question(`Rename ${from} to`, 'Rename', from, async (value) => {
    const to = value.trim().replace(/^\/+/, '');
    if (!to || to === from) return false;
    const url = api('rename', from, `&to=${encodeURIComponent(to)}`);
    if (!(await change('Rename', 'POST', url, `Renamed to ${to}`))) return false;
    if (view) show(to, view.state.doc.toString());
    await refresh();
    return true;
  });
});

deleteButton.addEventListener('click', () => {
  const path = openPath;
  if (!path) return;
  question(`Delete ${path}? This cannot be undone.`, 'Delete', undefined, async () => {
    if (!(await change('Delete', 'DELETE', api('file', path), `Deleted ${path}`))) return false;
    show(undefined);
    await refresh();
    return true;
  });
});

ask.addEventListener('submit', (event) => {
  event.preventDefault();
  const then = answer;
  if (then) void then(askInput.value).then((close) => close && closeQuestion());
});
byId('ask-cancel').addEventListener('click', closeQuestion);
ask.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') closeQuestion();
});
saveButton.addEventListener('click', () => void save());
void refresh();
