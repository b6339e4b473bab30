import { javascript } from '@codemirror/lang-javascript';
import { json } from '@codemirror/lang-json';
import { markdown } from '@codemirror/lang-markdown';
import { python } from '@codemirror/lang-python';
import type { Extension } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import { basicSetup, EditorView } from 'codemirror';

const tree = document.getElementById('tree') as HTMLElement;
const pathLabel = document.getElementById('path') as HTMLElement;
const saveButton = document.getElementById('save') as HTMLButtonElement;
const status = document.getElementById('status') as HTMLElement;
let openPath: string | undefined;
let view: EditorView | undefined;

const api = (what: string, path: string) => `/_svc/api/${what}?path=${encodeURIComponent(path)}`;

function language(path: string): Extension[] {
  if (/\.(c|m)?[jt]sx?$/.test(path))
    return [javascript({ typescript: /\.(c|m)?tsx?$/.test(path), jsx: /x$/.test(path) })];
  if (path.endsWith('.json')) return [json()];
  if (/\.(md|markdown)$/.test(path)) return [markdown()];
  if (path.endsWith('.py')) return [python()];
  return [];
}

/** The gateway's reason for a refusal: the envelope's `detail`, else its code. */
async function reason(res: Response): Promise<string> {
  const body = (await res.json().catch(() => ({}))) as { error?: string; detail?: string };
  return body.detail ?? body.error ?? `HTTP ${res.status}`;
}

async function save() {
  if (!openPath || !view) return;
  status.textContent = 'Saving…';
  const res = await fetch(api('file', openPath), {
    method: 'PUT',
    body: view.state.doc.toString(),
  });
  status.textContent = res.ok ? 'Saved' : `Not saved: ${await reason(res)}`;
}

async function open(path: string) {
  status.textContent = 'Opening…';
  const res = await fetch(api('file', path));
  if (!res.ok) {
    status.textContent = `Cannot open: ${await reason(res)}`;
    return;
  }
  const { content } = (await res.json()) as { content: string };
  openPath = path;
  pathLabel.textContent = path;
  saveButton.disabled = false;
  view?.destroy();
  view = new EditorView({
    doc: content,
    parent: document.getElementById('editor') as HTMLElement,
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
  status.textContent = '';
}

async function list(dir: string, into: HTMLElement, depth: number) {
  const res = await fetch(api('tree', dir));
  const { entries } = (await res.json()) as { entries: { name: string; kind: 'dir' | 'file' }[] };
  for (const entry of entries) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    const item = document.createElement('button');
    item.type = 'button';
    item.style.paddingLeft = `${depth}rem`;
    item.textContent = entry.kind === 'dir' ? `▸ ${entry.name}` : entry.name;
    item.dataset.path = path;
    into.append(item);
    if (entry.kind === 'file') {
      item.addEventListener('click', () => void open(path));
      continue;
    }
    const children = document.createElement('div');
    into.append(children);
    item.setAttribute('aria-expanded', 'false');
    item.addEventListener('click', () => {
      const expanded = item.getAttribute('aria-expanded') === 'true';
      item.setAttribute('aria-expanded', String(!expanded));
      item.textContent = `${expanded ? '▸' : '▾'} ${entry.name}`;
      if (expanded) children.replaceChildren();
      else void list(path, children, depth + 1);
    });
  }
}

saveButton.addEventListener('click', () => void save());
void list('', tree, 0);
