import { oneLine } from '../../mail/mailer';
import type { NotificationRow } from '../notifications/index';

// One message per send decision: plain text and HTML, a link to the item in the app, threaded
// per notification (References / In-Reply-To the thread root, a Message-ID per attempt).

export type MessageInput = {
  notification: NotificationRow;
  orgSlug: string;
  publicUrl: string;
  reason: string;
  heldBack: number;
  attemptSlug: string;
};

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function mailDomain(publicUrl: string): string {
  try {
    return new URL(publicUrl).hostname || 'sluice.local';
  } catch {
    return 'sluice.local';
  }
}

export const threadRoot = (n: NotificationRow, domain: string) => `<${n.slug}.notification@${domain}>`;
export const attemptMessageId = (attemptSlug: string, domain: string) => `<${attemptSlug}.attempt@${domain}>`;

const reasonLine: Record<string, string> = {
  open: 'New',
  reopen: 'Reopened',
  escalate: 'Severity raised',
  repeat: 'Still happening',
};

export function buildAlertMessage(m: MessageInput) {
  const n = m.notification;
  const link = `${m.publicUrl.replace(/\/+$/, '')}/o/${m.orgSlug}/notifications/${n.slug}`;
  const where = n.projectSlug
    ? `${n.projectSlug}${n.environmentSlug ? ` / ${n.environmentSlug}` : ''}`
    : m.orgSlug;
  const status =
    n.notificationType === 'pipeline_run_recovered' ? 'Recovered' : (reasonLine[m.reason] ?? 'New');
  const facts: [string, string][] = [
    ['Status', `${status} (${n.lifecycleState})`],
    ['Severity', n.severity],
    ['Type', n.notificationType],
    ['Where', where],
    ['Occurrences', String(n.occurrenceCount)],
    ['First seen', n.firstSeenAt.toISOString()],
    ['Last seen', n.lastSeenAt.toISOString()],
  ];
  const held =
    m.heldBack > 0
      ? `${m.heldBack} earlier message(s) to this destination were held back by the hourly limit.`
      : null;
  const title = oneLine(n.title);
  const text = [
    title,
    '',
    n.summary,
    '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    '',
    `Open in Sluice: ${link}`,
    ...(held ? ['', held] : []),
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>${esc(n.title)}</h2>`,
    `<p>${esc(n.summary)}</p>`,
    '<table>',
    ...facts.map(([k, v]) => `<tr><th align="left">${esc(k)}</th><td>${esc(v)}</td></tr>`),
    '</table>',
    `<p><a href="${esc(link)}">Open in Sluice</a></p>`,
    ...(held ? [`<p><em>${esc(held)}</em></p>`] : []),
    '</body></html>',
  ].join('\n');
  return { subject: `[Sluice] ${n.severity} ${title}`, text, html, link };
}
