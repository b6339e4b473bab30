import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';

// The page keeps its shell's id for the tab's lifetime, so a reload reattaches to the same shell.
const SESSION_KEY = 'svc-terminal-session';

const element = document.getElementById('terminal') as HTMLElement;
const terminal = new Terminal({ cursorBlink: true, convertEol: false, scrollback: 5000 });
const fit = new FitAddon();
terminal.loadAddon(fit);
terminal.open(element);
fit.fit();

function connect() {
  const url = new URL('/_svc/terminal/ws', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const known = sessionStorage.getItem(SESSION_KEY);
  if (known) url.searchParams.set('session', known);
  url.searchParams.set('cols', String(terminal.cols));
  url.searchParams.set('rows', String(terminal.rows));
  const socket = new WebSocket(url);
  let attached = false;
  socket.onmessage = (event) => {
    const data = String(event.data);
    if (!attached) {
      // The first message names the session; everything after it is shell output.
      attached = true;
      sessionStorage.setItem(SESSION_KEY, JSON.parse(data).session);
      return;
    }
    terminal.write(data);
  };
  socket.onclose = (event) => {
    if (event.code === 4000) {
      sessionStorage.removeItem(SESSION_KEY);
      terminal.write('\r\n[shell exited; reload for a new one]\r\n');
    } else if (event.code !== 4001) {
      terminal.write('\r\n[disconnected; reload to reconnect]\r\n');
    }
  };
  terminal.onData(
    (data) => socket.readyState === 1 && socket.send(JSON.stringify({ t: 'i', d: data })),
  );
  terminal.onResize(
    ({ cols, rows }) =>
      socket.readyState === 1 && socket.send(JSON.stringify({ t: 'r', c: cols, r: rows })),
  );
}

window.addEventListener('resize', () => fit.fit());
connect();
terminal.focus();
