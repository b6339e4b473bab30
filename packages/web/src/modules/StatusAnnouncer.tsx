import { MachineState } from '@svc/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';

interface Machine {
  id: string;
  name: string;
  status: MachineState;
}

const isMachine = (value: unknown): value is Machine =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Machine).id === 'string' &&
  typeof (value as Machine).name === 'string' &&
  MachineState.safeParse((value as Machine).status).success;

/** The machines in a query's data: an Agent or Plain VM, or a list of them. */
const machinesIn = (data: unknown): Machine[] =>
  (Array.isArray(data) ? data : [data]).filter(isMachine);

/**
 * The one polite live region of the dashboard: says when an Agent or a Plain VM the pages have
 * loaded changes state (`web-1 is now running.`), read from the query cache, so every list and
 * detail that polls feeds it and nothing is said twice. A machine seen for the first time is
 * not announced: the page shows it.
 */
export function StatusAnnouncer() {
  const qc = useQueryClient();
  const known = useRef(new Map<string, MachineState>());
  const [message, setMessage] = useState('');
  useEffect(() => {
    const cache = qc.getQueryCache();
    const take = (data: unknown) => {
      const changes: string[] = [];
      for (const machine of machinesIn(data)) {
        const before = known.current.get(machine.id);
        known.current.set(machine.id, machine.status);
        if (before && before !== machine.status)
          changes.push(`${machine.name} is now ${machine.status}.`);
      }
      if (changes.length > 0) setMessage(changes.join(' '));
    };
    for (const query of cache.getAll()) take(query.state.data);
    return cache.subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'success') take(event.action.data);
    });
  }, [qc]);
  return (
    <div className="visually-hidden" aria-live="polite" id="status-announcer">
      {message}
    </div>
  );
}
