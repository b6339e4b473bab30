import type { BundleDetail } from '@svc/contract';
import { useId } from 'react';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { TableScroll } from '../../components/TableScroll.js';
import { TypedConfirm } from '../../components/TypedConfirm.js';
import { formatBytes, formatDate } from '../../modules/format.js';

/** One bundle: what it is, its public page, and its versions newest first. */
export function BundleCard(props: {
  bundle: BundleDetail;
  canDelete: boolean;
  pending: boolean;
  onDeleteVersion: (version: number) => void;
  onDeleteBundle: () => void;
}) {
  const { bundle } = props;
  const headingId = useId();
  return (
    <article className="bundle" aria-labelledby={headingId}>
      <header className="page-head">
        <h2 id={headingId}>{bundle.displayName}</h2>
        <a
          href={bundle.url}
          target="_blank"
          rel="noopener"
          aria-label={`Public page of ${bundle.displayName} (opens in a new tab)`}
        >
          Public page
        </a>
      </header>
      <p className="muted">
        <code>{bundle.name}</code>
        {bundle.tags.length > 0 && ` · ${bundle.tags.join(', ')}`}
      </p>
      {bundle.description && <p>{bundle.description}</p>}
      <TableScroll label={`Versions of ${bundle.displayName}`}>
        <table>
          <caption className="visually-hidden">Versions of {bundle.displayName}</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Published</th>
              <th scope="col">Files</th>
              <th scope="col">Size</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {bundle.versions.map((v) => (
              <tr key={v.version}>
                <td>
                  <a href={`${bundle.url}/versions/${v.version}`} target="_blank" rel="noopener">
                    Version {v.version}
                  </a>
                </td>
                <td>{formatDate(v.createdAt)}</td>
                <td>{v.fileCount}</td>
                <td>
                  {formatBytes(v.totalBytes)}{' '}
                  <a href={`${bundle.url}/versions/${v.version}/download`}>
                    tarball ({formatBytes(v.tarball.size)})
                  </a>
                </td>
                <td>
                  {props.canDelete && (
                    <ConfirmButton
                      label={`Delete version ${v.version}`}
                      accessibleLabel={`Delete version ${v.version} of ${bundle.displayName}`}
                      question={`Delete version ${v.version}? Its number is never reused.`}
                      confirmLabel="Delete"
                      pending={props.pending}
                      onConfirm={() => props.onDeleteVersion(v.version)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {props.canDelete ? (
        <TypedConfirm
          name={bundle.name}
          action="Delete bundle"
          pending={props.pending}
          onConfirm={props.onDeleteBundle}
        />
      ) : (
        <p className="hint">Owners and admins delete versions and bundles.</p>
      )}
    </article>
  );
}
