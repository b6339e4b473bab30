import { type FirewallRule, HAS_SERVER, type MachineState } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { firewallKey, firewallMutation, firewallQuery } from '../../api/queries/plain-vms.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { FirewallRuleRow, RULE_COLUMNS, type RuleDraft } from './FirewallRuleRow.js';
import './FirewallSection.css';

const toDraft = (rule: FirewallRule): RuleDraft => ({
  protocol: rule.protocol,
  port: rule.port,
  sources: rule.sourceIps.join(', '),
  description: rule.description,
});

/** Why the rules cannot be saved now: the VM has no server to hold them (the service says 409). */
const whyNotSave = (status: MachineState) =>
  HAS_SERVER[status]
    ? undefined
    : `The firewall can be saved while the Plain VM has a server; it is ${status}.`;

export function FirewallSection({ vmId, status }: { vmId: string; status: MachineState }) {
  const firewall = useQuery(firewallQuery(vmId));
  return (
    <>
      <h2>Firewall</h2>
      <QueryView query={firewall} what="the firewall">
        {(data) => (
          <FirewallEditor vmId={vmId} rules={data.rules} unavailable={whyNotSave(status)} />
        )}
      </QueryView>
    </>
  );
}

/**
 * Edits the whole inbound rule set; the server's messages appear under the rule they concern.
 * "Firewall saved." stays only until the rules are edited again: then they are unsaved.
 */
function FirewallEditor(props: { vmId: string; rules: FirewallRule[]; unavailable?: string }) {
  const qc = useQueryClient();
  const reasonId = useId();
  const [drafts, setDraftsNow] = useState(() => props.rules.map(toDraft));
  const [edited, setEdited] = useState(false);
  const setDrafts = (next: RuleDraft[]) => {
    setDraftsNow(next);
    setEdited(true);
  };
  // Drafts start from the provider's rules and are replaced by its answer after each save (the
  // canonical form); a background refetch never overwrites an edit in progress.
  const save = useMutation({
    ...firewallMutation(qc, props.vmId),
    onSuccess: (data) => {
      qc.setQueryData(firewallKey(props.vmId), data);
      setDraftsNow(data.rules.map(toDraft));
      setEdited(false);
    },
  });
  const update = (index: number, next: RuleDraft) =>
    setDrafts(drafts.map((d, i) => (i === index ? next : d)));

  return (
    <form
      noValidate
      className="firewall"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate({
          rules: drafts.map((d) => ({
            protocol: d.protocol,
            port: d.port.trim(),
            sourceIps: d.sources.split(/[\s,]+/).filter(Boolean),
            description: d.description,
          })),
        });
      }}
    >
      {drafts.length === 0 && <p className="hint">No rules: nothing can reach the VM.</p>}
      {drafts.length > 0 && (
        <TableScroll label="Firewall rules">
          <table className="firewall-rules">
            <thead>
              <tr>
                {RULE_COLUMNS.map((column) => (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ))}
                <th scope="col">
                  <span className="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            {drafts.map((draft, index) => (
              <FirewallRuleRow
                // Rows have no identity of their own; position is what the server's issues point at.
                // biome-ignore lint/suspicious/noArrayIndexKey: see above
                key={index}
                index={index}
                draft={draft}
                errors={issuesAt(save.error, 'rules', index)}
                onChange={(next) => update(index, next)}
                onRemove={() => setDrafts(drafts.filter((_, i) => i !== index))}
              />
            ))}
          </table>
        </TableScroll>
      )}
      <ErrorMessage error={save.error} />
      {save.isSuccess && !edited && <p role="status">Firewall saved.</p>}
      {edited && <p className="hint">Unsaved changes.</p>}
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            setDrafts([...drafts, { protocol: 'tcp', port: '', sources: '', description: '' }])
          }
        >
          Add rule
        </button>
        <button
          type="submit"
          className="primary"
          disabled={save.isPending || Boolean(props.unavailable)}
          aria-describedby={props.unavailable ? reasonId : undefined}
        >
          {save.isPending ? 'Saving…' : 'Save firewall'}
        </button>
      </div>
      {props.unavailable && (
        <p className="hint" id={reasonId} data-testid="firewall-reason">
          {props.unavailable}
        </p>
      )}
    </form>
  );
}
