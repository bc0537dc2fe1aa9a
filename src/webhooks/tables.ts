// Row types of outbound webhooks (docs/events.md §Webhooks): subscriptions, the event types each
// takes, and the outbox of deliveries.
export interface WebhookSubscriptionsTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** The `whsec_…` signing secret. */
  secret: string;
  /** 1: every event type; 0: the types of webhook_subscription_events. */
  all_events: number;
  created_at: string;
  /**
   * The first failure of the current run of failures; null after a success, or once none of its
   * rows is left failing.
   */
  failing_since: string | null;
  last_error: string | null;
  disabled_at: string | null;
}

export interface WebhookSubscriptionEventsTable {
  subscription_id: string;
  type: string;
}

export interface WebhookDeliveriesTable {
  /** `<event id>:<subscription id>` */
  id: string;
  subscription_id: string;
  event_id: string;
  event_seq: number | string;
  object_id: string;
  next_attempt_at: string;
  lease_owner: string | null;
  attempts: number;
  last_error: string | null;
  first_failed_at: string | null;
  /**
   * 1: out of the index the claim walks (docs/events.md §Delivery): a failing endpoint's
   * row, or one queued behind a recovered endpoint's parked rows; 0 otherwise.
   */
  parked?: number;
}

declare module '../db/types.ts' {
  interface Database {
    webhook_subscriptions: WebhookSubscriptionsTable;
    webhook_subscription_events: WebhookSubscriptionEventsTable;
    webhook_deliveries: WebhookDeliveriesTable;
  }
}
