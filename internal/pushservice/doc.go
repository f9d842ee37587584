// Package pushservice is A2A push delivery as the A2A server runs it
// (OpenWOP RFC 0214; webhooks.md §Durability): the push-config operations
// ([Service.Register], [Service.Get], [Service.List], [Service.Delete],
// and [Service.Reserve] for a config sent with SendMessage) and the
// at-least-once delivery worker that follows each task's run and posts its
// events to the task's configs. It runs over what the host configures in
// package push — the egress guard (package egress), the config, secret
// and outbox stores, the retry policy ([push.Options]) — and over the [Projector] the A2A
// server supplies, so a push body is exactly what its stream would show.
// Package push documents the behaviour a host and a receiver see; this
// package is how it is done.
//
// The Service does not authorize: the A2A server reads the task under the
// caller's Subject first, so a task the caller cannot read never reaches
// it.
package pushservice
