//! `WebhookService`: the rules of webhook endpoints (who may create, see and delete them; the
//! destination guard; event names, filters, name and bearer token).

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use teamcomm_kernel::{
    Error, ErrorCode, EventType, Page, PageRequest, SharedClock, WireEnum, text,
};
use teamcomm_labels::{EntityKind, LabelledEntities};
use teamcomm_org::{Role, User};
use uuid::Uuid;

use crate::delivery::{DeliveryRepository, DeliverySettings, WebhookDelivery};
use crate::guard::{AllowList, Refusal, Target, check_addresses, parse_destination};
use crate::names::{from_dotted_name, from_legacy_name};
use crate::samples::{SAMPLE_ID_PREFIX, sample_event};
use crate::{
    CreatedEndpoint, Delivery, DeliveryOutcome, EndpointRequest, EndpointSecrets, HostResolver,
    NewWebhookEndpoint, SecretText, WebhookEndpoint, WebhookId, WebhookRepository, WebhookSender,
    generate_signing_secret,
};

#[cfg(test)]
mod tests;

/// The longest endpoint name, in characters.
pub const MAX_ENDPOINT_NAME: usize = 255;
/// The longest bearer token, in characters.
pub const MAX_BEARER_TOKEN: usize = 1024;
/// The most check-ins, forms or workflows one endpoint may filter on.
pub const MAX_OBJECT_IDS: usize = 100;
/// The most endpoints one organization may have (every event is fanned out to each).
pub const MAX_ENDPOINTS: u64 = 100;

/// Which vocabulary of event names a door speaks, and the names of its fields.
#[derive(Debug, Clone, Copy)]
struct Door {
    /// Upper-case names accepted too (the legacy form).
    legacy: bool,
    events_field: &'static str,
    object_ids_field: &'static str,
}

const WEBHOOKS: Door = Door {
    legacy: false,
    events_field: "events",
    object_ids_field: "object_ids",
};

const SUBSCRIPTION: Door = Door {
    legacy: true,
    events_field: "subscriptions",
    object_ids_field: "subscribed_objects",
};

/// What a sample delivery did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleSent {
    pub event: EventType,
    pub outcome: DeliveryOutcome,
}

/// The ports of [`WebhookService`].
#[derive(Clone)]
pub struct WebhookPorts {
    pub endpoints: Arc<dyn WebhookRepository>,
    pub resolver: Arc<dyn HostResolver>,
    pub sender: Arc<dyn WebhookSender>,
    /// Deliveries of real events: their view, re-enabling and replays.
    pub deliveries: Arc<dyn DeliveryRepository>,
    /// Which uuids are check-ins, forms or workflows of the organization (`object_ids`).
    pub objects: Arc<dyn LabelledEntities>,
    pub clock: SharedClock,
}

/// An organization's webhook endpoints.
#[derive(Clone)]
pub struct WebhookService {
    endpoints: Arc<dyn WebhookRepository>,
    resolver: Arc<dyn HostResolver>,
    sender: Arc<dyn WebhookSender>,
    deliveries: Arc<dyn DeliveryRepository>,
    objects: Arc<dyn LabelledEntities>,
    allow: Arc<AllowList>,
    clock: SharedClock,
}

impl WebhookService {
    pub fn new(ports: WebhookPorts, allow: AllowList) -> Self {
        WebhookService {
            endpoints: ports.endpoints,
            resolver: ports.resolver,
            sender: ports.sender,
            deliveries: ports.deliveries,
            objects: ports.objects,
            allow: Arc::new(allow),
            clock: ports.clock,
        }
    }

    /// `POST /v1/webhooks/{id}/sample/`: delivers a sample event of the dotted type `event` to
    /// an endpoint the actor may see, now, and says how it went.
    pub async fn send_sample(
        &self,
        actor: &User,
        id: WebhookId,
        event: &str,
    ) -> Result<SampleSent, Error> {
        let endpoint = self.get(actor, id).await?;
        let event = one_event(event, "event", false)?;
        self.deliver_sample(&endpoint, event).await
    }

    /// `POST /v1/webhook-subscription/sample/`: admins only; delivers a sample of `event_type`
    /// (upper-case or dotted) to the organization's endpoint of this URL (`not_found` without
    /// one).
    pub async fn send_subscription_sample(
        &self,
        actor: &User,
        url: &str,
        event_type: &str,
    ) -> Result<SampleSent, Error> {
        require_admin(actor, "manage webhook subscriptions")?;
        let event = one_event(event_type, "event_type", true)?;
        let url = normalize_url(url);
        let endpoints = self
            .endpoints
            .list_endpoints(actor.org_id, None, PageRequest::all())
            .await?;
        let endpoint = endpoints
            .results
            .into_iter()
            .find(|e| e.url == url)
            .ok_or_else(Error::not_found)?;
        self.deliver_sample(&endpoint, event).await
    }

    async fn deliver_sample(
        &self,
        endpoint: &WebhookEndpoint,
        event_type: EventType,
    ) -> Result<SampleSent, Error> {
        let secrets = self
            .endpoints
            .endpoint_secrets(endpoint.org_id, endpoint.id)
            .await?;
        let now = self.clock.now();
        let event = sample_event(endpoint.org_id, event_type, now);
        let delivery = Delivery {
            url: endpoint.url.clone(),
            message_id: format!("{SAMPLE_ID_PREFIX}{}", event.id),
            timestamp: now.unix_timestamp(),
            body: event.payload().to_string().into_bytes(),
            signing_secret: Some(secrets.signing_secret),
            bearer_token: secrets.bearer_token,
            webhook_secret: None,
        };
        Ok(SampleSent {
            event: event_type,
            outcome: self.sender.send(&delivery).await,
        })
    }

    /// `POST /v1/webhooks/`: members and admins (not guests); dotted event names.
    pub async fn create(
        &self,
        actor: &User,
        request: &EndpointRequest,
    ) -> Result<CreatedEndpoint, Error> {
        refuse_guest(actor)?;
        self.create_through(actor, request, WEBHOOKS).await
    }

    /// `POST /v1/webhook-subscription/`: admins only; upper-case event names (dotted ones are
    /// accepted too, as the vendor's own example sends them).
    pub async fn create_subscription(
        &self,
        actor: &User,
        request: &EndpointRequest,
    ) -> Result<CreatedEndpoint, Error> {
        require_admin(actor, "manage webhook subscriptions")?;
        self.create_through(actor, request, SUBSCRIPTION).await
    }

    async fn create_through(
        &self,
        actor: &User,
        request: &EndpointRequest,
        door: Door,
    ) -> Result<CreatedEndpoint, Error> {
        let events = event_types(&request.events, door)?;
        let object_ids = object_ids(&request.object_ids, door.object_ids_field)?;
        let name = text::optional_name(
            "name",
            request.name.as_deref().unwrap_or_default(),
            MAX_ENDPOINT_NAME,
        )?;
        let bearer_token = bearer_token(request.bearer_token.as_deref())?;
        self.known_objects(actor, &object_ids, door.object_ids_field)
            .await?;
        let url = self.check_destination(&request.url).await?;
        let endpoints = self.endpoints.count_endpoints(actor.org_id).await?;
        if endpoints >= MAX_ENDPOINTS {
            return Err(Error::new(
                ErrorCode::WebhookEndpointsLimitReached,
                format!(
                    "Your organization has {endpoints} webhook endpoints; the most is {MAX_ENDPOINTS}. Delete one first."
                ),
            )
            .with_extra("limit", MAX_ENDPOINTS));
        }
        let signing_secret = generate_signing_secret();
        let new = NewWebhookEndpoint {
            id: WebhookId::new(),
            url,
            events,
            name,
            object_ids,
            secrets: EndpointSecrets {
                signing_secret: signing_secret.clone(),
                bearer_token,
            },
            created_by: actor.id,
            created_at: self.clock.now(),
        };
        let endpoint = self.endpoints.create_endpoint(actor.org_id, &new).await?;
        let sample = match (request.immediate_sample, endpoint.events.first()) {
            (true, Some(&first)) => Some(self.deliver_sample(&endpoint, first).await?),
            _ => None,
        };
        Ok(CreatedEndpoint {
            endpoint,
            signing_secret,
            sample,
        })
    }

    /// Every id must be a check-in, form or workflow of the actor's organization (another
    /// organization's is as unknown as a made-up one).
    async fn known_objects(&self, actor: &User, ids: &[Uuid], field: &str) -> Result<(), Error> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut found: HashSet<Uuid> = HashSet::new();
        for kind in [
            EntityKind::Checkins,
            EntityKind::Forms,
            EntityKind::Workflows,
        ] {
            found.extend(self.objects.existing(actor.org_id, kind, ids).await?);
        }
        let unknown: Vec<String> = ids
            .iter()
            .filter(|id| !found.contains(id))
            .map(Uuid::to_string)
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        Err(Error::invalid_field(
            field,
            format!(
                "Not a check-in, form or workflow of your organization: {}.",
                unknown.join(", ")
            ),
        ))
    }

    /// Admins see the organization's endpoints; others those they created.
    pub async fn list(
        &self,
        actor: &User,
        page: PageRequest,
    ) -> Result<Page<WebhookEndpoint>, Error> {
        let owner = (!actor.role.is_admin()).then_some(actor.id);
        Ok(self
            .endpoints
            .list_endpoints(actor.org_id, owner, page)
            .await?)
    }

    /// `not_found` for another organization's endpoint, and for a non-admin, another person's.
    pub async fn get(&self, actor: &User, id: WebhookId) -> Result<WebhookEndpoint, Error> {
        let endpoint = self.endpoints.get_endpoint(actor.org_id, id).await?;
        if actor.role.is_admin() || endpoint.created_by == Some(actor.id) {
            Ok(endpoint)
        } else {
            Err(Error::not_found())
        }
    }

    /// Deletes an endpoint the actor may see ([`WebhookService::get`]).
    pub async fn delete(&self, actor: &User, id: WebhookId) -> Result<(), Error> {
        self.get(actor, id).await?;
        Ok(self.endpoints.delete_endpoint(actor.org_id, id).await?)
    }

    /// `GET /v1/webhooks/{id}/deliveries/`: the recent deliveries of an endpoint the actor may
    /// see, newest first, with their outcome.
    pub async fn deliveries(
        &self,
        actor: &User,
        id: WebhookId,
        page: PageRequest,
    ) -> Result<Page<WebhookDelivery>, Error> {
        self.get(actor, id).await?;
        Ok(self
            .deliveries
            .list_deliveries(actor.org_id, id, page)
            .await?)
    }

    /// `POST /v1/webhooks/{id}/enable/`: delivers to an endpoint the actor may see again (its
    /// new events; failed ones wait for a replay). Enabling an enabled endpoint changes nothing.
    pub async fn enable(&self, actor: &User, id: WebhookId) -> Result<WebhookEndpoint, Error> {
        let endpoint = self.get(actor, id).await?;
        if endpoint.enabled {
            return Ok(endpoint);
        }
        self.deliveries.enable_endpoint(actor.org_id, id).await?;
        self.get(actor, id).await
    }

    /// `POST /v1/webhooks/{id}/replay/`: queues the failed deliveries of an enabled endpoint
    /// the actor may see again, each with a full set of attempts; answers how many. A disabled
    /// endpoint is enabled first (`enabled`: a 400 otherwise).
    pub async fn replay(&self, actor: &User, id: WebhookId) -> Result<u64, Error> {
        let endpoint = self.get(actor, id).await?;
        if !endpoint.enabled {
            return Err(Error::invalid_field(
                "enabled",
                "Enable the endpoint before replaying its deliveries.",
            ));
        }
        Ok(self
            .deliveries
            .replay_failed(
                actor.org_id,
                id,
                self.clock.now(),
                DeliverySettings::default().max_attempts,
            )
            .await?)
    }

    /// `DELETE /v1/webhook-subscription/`: admins only; deletes the organization's endpoints
    /// of this URL (compared after the same normalization as at creation); `not_found` when
    /// there are none.
    pub async fn delete_subscription(&self, actor: &User, url: &str) -> Result<u64, Error> {
        require_admin(actor, "manage webhook subscriptions")?;
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::invalid_field("url", "This field may not be blank."));
        }
        let normalized = normalize_url(url);
        match self
            .endpoints
            .delete_endpoints_by_url(actor.org_id, &normalized)
            .await?
        {
            0 => Err(Error::not_found()),
            n => Ok(n),
        }
    }

    /// The URL normalized, once the destination guard let it through (resolving its host).
    async fn check_destination(&self, raw: &str) -> Result<String, Error> {
        if raw.trim().is_empty() {
            return Err(Error::invalid_field("url", "This field may not be blank."));
        }
        let destination = parse_destination(raw, &self.allow).map_err(refused)?;
        if let Target::Name { host, port } = &destination.target {
            let ips = self
                .resolver
                .resolve(host, *port)
                .await
                .map_err(|_| refused(Refusal::Unresolvable(host.clone())))?;
            check_addresses(host, &ips).map_err(refused)?;
        }
        Ok(destination.url)
    }
}

/// A URL as stored: normalized by the WHATWG rules when it parses.
fn normalize_url(url: &str) -> String {
    let url = url.trim();
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.to_string())
}

/// The one event a sample names: dotted (or upper-case too, on the legacy form).
fn one_event(name: &str, field: &str, legacy: bool) -> Result<EventType, Error> {
    let name = name.trim();
    from_dotted_name(name)
        .or_else(|| legacy.then(|| from_legacy_name(name)).flatten())
        .ok_or_else(|| Error::invalid_field(field, format!("Unknown event type: {name}.")))
}

/// A guard refusal as a 400 on `url`, its reason in `extra.reason`.
fn refused(refusal: Refusal) -> Error {
    Error::invalid_field("url", refusal.message()).with_extra("reason", refusal.reason())
}

fn refuse_guest(actor: &User) -> Result<(), Error> {
    if actor.role == Role::Guest {
        return Err(Error::new(
            ErrorCode::GuestNotAllowed,
            "Guest accounts cannot do this.",
        ));
    }
    Ok(())
}

fn require_admin(actor: &User, what: &str) -> Result<(), Error> {
    if actor.role.is_admin() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::OrgAdminRequired,
            format!("Only organization admins can {what}."),
        ))
    }
}

/// The events named, distinct, in the order of the spec's list; every unknown name is named.
fn event_types(names: &[String], door: Door) -> Result<Vec<EventType>, Error> {
    if names.is_empty() {
        return Err(Error::invalid_field(
            door.events_field,
            "Name at least one event type.",
        ));
    }
    let mut events = BTreeSet::new();
    let mut unknown = Vec::new();
    for name in names {
        let name = name.trim();
        let event = from_dotted_name(name)
            .or_else(|| door.legacy.then(|| from_legacy_name(name)).flatten());
        match event {
            Some(e) => {
                events.insert(position(e));
            }
            None => unknown.push(name.to_owned()),
        }
    }
    if !unknown.is_empty() {
        return Err(Error::invalid_field(
            door.events_field,
            format!("Unknown event type: {}.", unknown.join(", ")),
        ));
    }
    Ok(events.into_iter().map(|i| EventType::ALL[i]).collect())
}

/// Where the event stands in the spec's list.
fn position(event: EventType) -> usize {
    EventType::ALL
        .iter()
        .position(|e| *e == event)
        .expect("EventType::ALL lists every event type")
}

/// The uuids, distinct, in the order given.
fn object_ids(ids: &[String], field: &str) -> Result<Vec<Uuid>, Error> {
    if ids.len() > MAX_OBJECT_IDS {
        return Err(Error::invalid_field(
            field,
            format!("Ensure this field has no more than {MAX_OBJECT_IDS} elements."),
        ));
    }
    let mut out: Vec<Uuid> = Vec::with_capacity(ids.len());
    for id in ids {
        let uuid = Uuid::parse_str(id.trim())
            .map_err(|_| Error::invalid_field(field, format!("'{id}' is not a valid UUID.")))?;
        if !out.contains(&uuid) {
            out.push(uuid);
        }
    }
    Ok(out)
}

/// A token sent as a header value: printable ASCII, at most [`MAX_BEARER_TOKEN`] characters;
/// blank means none.
fn bearer_token(token: Option<&str>) -> Result<Option<SecretText>, Error> {
    let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if token.len() > MAX_BEARER_TOKEN {
        return Err(Error::invalid_field(
            "bearer_token",
            format!("Ensure this field has no more than {MAX_BEARER_TOKEN} characters."),
        ));
    }
    if !token.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err(Error::invalid_field(
            "bearer_token",
            "This field may contain only printable ASCII characters (it is sent as a header).",
        ));
    }
    Ok(Some(SecretText::new(token)))
}
