import { startSwiftS3 } from '../../peers/swift-s3';
import { type ConformanceFixture, configOf, contextFor, type Target } from './fixture';

// S3: OpenStack Swift's s3api on loopback, a real S3-compatible server with signed requests.

const BUCKET = 'sluice-conformance';

const reach = (t: Target, accessKeyId: string, secret: string) => ({
  conn: {
    config: configOf('s3', {
      bucket: BUCKET,
      endpoint: `http://${t.host}:${t.port}`,
      force_path_style: true,
      timeout_seconds: 1,
      allow_private_hosts: t.allowPrivate,
    }),
    credentials: { access_key_id: accessKeyId, secret_access_key: secret },
  },
  ctx: contextFor(t),
});

export const s3Fixture: ConformanceFixture = {
  at: (t) => reach(t, 'unused', 'unused-secret'),
  // One second per attempt, and the SDK tries more than once.
  silentTimeoutSeconds: 15,
  sinkOperation: { operation_type: 's3', key: 'conformance/people.csv' },
  async live() {
    const peer = await startSwiftS3();
    await peer.createBucket(BUCKET);
    const at = { host: '127.0.0.1', port: Number(new URL(peer.endpoint).port), allowPrivate: true };
    return {
      good: reach(at, peer.accessKeyId, peer.secretAccessKey),
      badCredentials: reach(at, peer.accessKeyId, 'wrong-secret-value-for-s3'),
      roundTrip: { name: 'conformance/people.csv', fields: ['id', 'name'], throughSink: true },
      close: () => peer.stop(),
    };
  },
};
