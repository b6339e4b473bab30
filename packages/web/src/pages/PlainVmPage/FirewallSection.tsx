import type { FirewallRule } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { firewallKey, firewallMutation, firewallQuery } from '../../api/queries/plain-vms.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { FirewallRuleRow, type RuleDraft } from './FirewallRuleRow.js';

const toDraft = (rule: FirewallRule): RuleDraft => ({
  protocol: rule.protocol,
  port: rule.port,
  sources: rule.sourceIps.join(', '),
  description: rule.description,
});

export function FirewallSection({ vmId }: { vmId: string }) {
  const firewall = useQuery(firewallQuery(vmId));
  return (
    <>
      <h2>Firewall</h2>
      <QueryView query={firewall} what="the firewall">
        {(data) => <FirewallEditor vmId={vmId} rules={data.rules} />}
      </QueryView>
    </>
  );
}

/** Edits the whole inbound rule set; the server's messages appear under the rule they concern. */
function FirewallEditor(props: { vmId: string; rules: FirewallRule[] }) {
  const qc = useQueryClient();
  const [drafts, setDrafts] = useState(() => props.rules.map(toDraft));
  // Drafts start from the provider's rules and are replaced by its answer after each save (the
  // canonical form); a background refetch never overwrites an edit in progress.
  const save = useMutation({
    ...firewallMutation(qc, props.vmId),
    onSuccess: (data) => {
      qc.setQueryData(firewallKey(props.vmId), data);
      setDrafts(data.rules.map(toDraft));
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
      <ol className="rules">
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
      </ol>
      <ErrorMessage error={save.error} />
      {save.isSuccess && <p role="status">Firewall saved.</p>}
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            setDrafts([...drafts, { protocol: 'tcp', port: '', sources: '', description: '' }])
          }
        >
          Add rule
        </button>
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save firewall'}
        </button>
      </div>
    </form>
  );
}
