import { randomBytes } from 'node:crypto';
import { startSalesforceApi } from '../../peers/salesforce-api';
import {
  type ConformanceFixture,
  configOf,
  contextFor,
  SUITE_ANSWER_TIMEOUT_MS,
  type Target,
} from './fixture';

// Salesforce: the fake REST API with the client-credentials flow of a connected app.

const SECRET = `SfSecret${randomBytes(12).toString('hex')}`;

// Plain http is for private hosts only (a real instance is https), so a blocked target is https.
const reach = (
  t: Target,
  secret: string,
  instanceUrl = `${t.allowPrivate ? 'http' : 'https'}://${t.host}:${t.port}`,
) => ({
  conn: {
    config: configOf('salesforce', { instance_url: instanceUrl, allow_private_hosts: t.allowPrivate }),
    credentials: { client_id: 'sluice-app', client_secret: secret },
  },
  ctx: contextFor(t),
});

export const salesforceFixture: ConformanceFixture = {
  at: (t) => reach(t, SECRET),
  // The suite's answer timeout, in place of a connection test's own 30 s (salesforce/operations.ts).
  silentTimeoutSeconds: SUITE_ANSWER_TIMEOUT_MS / 1000,
  sinkOperation: { operation_type: 'object_rows', object: 'Person__c', external_id_field: 'Ext_Id__c' },
  async live() {
    const peer = await startSalesforceApi({
      clients: [{ id: 'sluice-app', secret: SECRET }],
      objects: [
        {
          name: 'Person__c',
          fields: [
            { name: 'Id', type: 'id' },
            { name: 'Name', type: 'string' },
            { name: 'Ext_Id__c', type: 'string', externalId: true },
          ],
          records: [],
        },
      ],
    });
    const at = { host: '127.0.0.1', port: Number(new URL(peer.url).port), allowPrivate: true };
    return {
      good: reach(at, SECRET, peer.url),
      badCredentials: reach(at, 'wrong-secret-for-salesforce', peer.url),
      roundTrip: { name: 'Person__c', fields: ['Name', 'Ext_Id__c'] },
      close: () => peer.close(),
    };
  },
};
