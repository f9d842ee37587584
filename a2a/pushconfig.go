package a2a

// The four push-config operations (A2A 1.0.1 §5.3, §9.4; OpenWOP RFC 0214) and the push
// bodies. The gate refuses all four with -32003 while
// a2a.pushNotifications is off (Options.Push nil); with it on they run
// over the push package's Service. Every operation reads the task under the caller's
// Subject first, so an unknown, unreadable or malformed task id answers
// -32001 exactly as GetTask does, and a config id of another task answers
// like one that never existed (OpenWOP RFC 0214 §E). Responses show the config as
// registered minus its secrets: {taskId, id, url, authentication:{scheme}}
// — never the token or the credentials (OpenWOP RFC 0214 §A).

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/pushservice"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/push"
)

// Page sizes of ListTaskPushNotificationConfigs.
const maxPushPageSize = 100

// createTaskPushConfig registers a config on a task the caller can read. The
// URL passes the egress guard or the request is -32602 on "url"
// (OpenWOP RFC 0214 §B).
func (s *Server) createTaskPushConfig(ctx context.Context, c *call, req *wire.PushConfig) (*wire.PushConfig, error) {
	if s.push == nil {
		return nil, s.errs.pushNotSupported()
	}
	run, err := s.readRun(ctx, c, string(req.TaskID))
	if err != nil {
		return nil, err
	}
	cfg, err := s.push.Register(ctx, c.subject, &run, pushSpec(req))
	if err != nil {
		return nil, s.pushRefusal(ctx, "", err)
	}
	return wirePushConfig(cfg), nil
}

// getTaskPushConfig reads one config; one the task does not hold is -32001.
func (s *Server) getTaskPushConfig(ctx context.Context, c *call, req *wire.GetTaskPushConfigRequest) (*wire.PushConfig, error) {
	if s.push == nil {
		return nil, s.errs.pushNotSupported()
	}
	if _, err := s.readRun(ctx, c, string(req.TaskID)); err != nil {
		return nil, err
	}
	if req.ID == "" {
		return nil, s.errs.invalidParams("id", "id is required")
	}
	cfg, err := s.push.Get(ctx, string(req.TaskID), req.ID)
	if err != nil {
		return nil, s.pushRefusal(ctx, "", err)
	}
	return wirePushConfig(cfg), nil
}

// listTaskPushConfigs lists a task's configs in registration order, pageSize
// 1–100 (0: up to 100); nextPageToken is the last config id of a full page.
func (s *Server) listTaskPushConfigs(ctx context.Context, c *call, req *wire.ListTaskPushConfigRequest) (*wire.ListTaskPushConfigResponse, error) {
	if s.push == nil {
		return nil, s.errs.pushNotSupported()
	}
	if _, err := s.readRun(ctx, c, string(req.TaskID)); err != nil {
		return nil, err
	}
	size := req.PageSize
	switch {
	case size == 0:
		size = maxPushPageSize
	case size < 1 || size > maxPushPageSize:
		return nil, s.errs.invalidParams("pageSize", "pageSize must be between 1 and "+strconv.Itoa(maxPushPageSize))
	}
	cfgs, err := s.push.List(ctx, string(req.TaskID))
	if err != nil {
		return nil, s.pushRefusal(ctx, "", err)
	}
	start := 0
	if req.PageToken != "" {
		start = -1
		for i := range cfgs {
			if pushPageToken(cfgs[i].ID) == req.PageToken {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, s.errs.invalidParams("pageToken", "pageToken is not a token this server issued for this task")
		}
	}
	end := min(start+size, len(cfgs))
	out := &wire.ListTaskPushConfigResponse{Configs: make([]*wire.PushConfig, 0, end-start)}
	for _, cfg := range cfgs[start:end] {
		out.Configs = append(out.Configs, wirePushConfig(cfg))
	}
	if end < len(cfgs) {
		out.NextPageToken = pushPageToken(cfgs[end-1].ID)
	}
	return out, nil
}

// pushPageToken continues a config list after the config id: opaque to
// the client, meaningful only for the task it was issued on.
func pushPageToken(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// deleteTaskPushConfig removes a config; an absent one on a readable task
// succeeds (idempotent), and nothing of another task is ever touched.
func (s *Server) deleteTaskPushConfig(ctx context.Context, c *call, req *wire.DeleteTaskPushConfigRequest) error {
	if s.push == nil {
		return s.errs.pushNotSupported()
	}
	if _, err := s.readRun(ctx, c, string(req.TaskID)); err != nil {
		return err
	}
	if req.ID == "" {
		return s.errs.invalidParams("id", "id is required")
	}
	if err := s.push.Delete(ctx, string(req.TaskID), req.ID); err != nil {
		return s.pushRefusal(ctx, "", err)
	}
	return nil
}

// pushSpec is the push package's view of a wire config.
func pushSpec(p *wire.PushConfig) pushservice.Spec {
	spec := pushservice.Spec{ID: p.ID, URL: p.URL, Token: p.Token}
	if p.Auth != nil {
		spec.Scheme, spec.Credentials = p.Auth.Scheme, p.Auth.Credentials
	}
	return spec
}

// wirePushConfig is a config as responses show it: no token, no
// credentials.
func wirePushConfig(c pushservice.Config) *wire.PushConfig {
	out := &wire.PushConfig{TaskID: wire.TaskID(c.TaskID), ID: c.ID, URL: c.URL}
	if c.Scheme != "" {
		out.Auth = &wire.PushAuthInfo{Scheme: c.Scheme}
	}
	return out
}

// pushRefusal maps an error of the push Service. prefix is prepended to
// a refused field ("configuration.taskPushNotificationConfig." for a
// config sent with SendMessage). Messages are fixed: never the URL, what
// it resolved to, or a secret.
func (s *Server) pushRefusal(ctx context.Context, prefix string, err error) error {
	var fe *pushservice.FieldError
	switch {
	case errors.As(err, &fe) && fe.Field == "url":
		return s.errs.invalidParams(prefix+"url", "url must be an https URL of a public host")
	case errors.As(err, &fe):
		return s.errs.invalidParams(prefix+fe.Field, fe.Reason)
	case errors.Is(err, push.ErrTooManyConfigs):
		return s.errs.invalidParams(prefix+"id", "the task already holds the most push configs allowed")
	case errors.Is(err, interop.ErrNotFound):
		return s.errs.taskNotFound()
	}
	return s.fault(ctx, "a2a: push config operation failed", "error", err)
}

// inlineConfigField prefixes the fields of a config sent with SendMessage.
const inlineConfigField = "configuration.taskPushNotificationConfig."

// inlinePush is a config sent with SendMessage
// (configuration.taskPushNotificationConfig): its spec, then, once the
// message is judged and about to be applied, its reservation.
type inlinePush struct {
	spec     pushservice.Spec
	reserved *pushservice.Reservation
}

// reserveInline decides a config sent with SendMessage just before the
// message is applied to task taskID ("" for the task it creates): push off
// is -32003, a bad config or a task already holding the most configs
// -32602, a failing vault or config store -32603 — each before anything
// is written. Without a client id the config id derives from the
// messageId, so a repeated message (idempotent: the same task) replaces
// its config instead of adding another.
func (s *Server) reserveInline(ctx context.Context, taskID string, in inbound) error {
	p := in.push
	if p == nil {
		return nil
	}
	if s.push == nil {
		return s.errs.pushNotSupported()
	}
	spec := p.spec
	if spec.ID == "" {
		sum := sha256.Sum256([]byte(in.msg.ID))
		spec.ID = "msg-" + base64.RawURLEncoding.EncodeToString(sum[:18])
	}
	res, err := s.push.Reserve(ctx, taskID, spec)
	if err != nil {
		return s.pushRefusal(ctx, inlineConfigField, err)
	}
	p.reserved = res
	return nil
}

// releaseInline gives up the reservation of a message that was not
// applied.
func (in inbound) releaseInline(ctx context.Context) {
	if in.push != nil && in.push.reserved != nil {
		in.push.reserved.Release(ctx)
	}
}

// commitInline registers the reserved config on the task the message
// created or continued. It fails only when the config store fails after
// the write, which is answered as the fault it is (-32603, logged); a
// repeated message (idempotent on a new task) registers it again.
func (s *Server) commitInline(ctx context.Context, c *call, run *interop.Run, in inbound) error {
	if in.push == nil || in.push.reserved == nil {
		return nil
	}
	if _, err := in.push.reserved.Commit(ctx, c.subject, run); err != nil {
		return s.pushRefusal(ctx, inlineConfigField, err)
	}
	return nil
}

// pushEvents renders one run event as push bodies, exactly as a stream of
// the task would show it (OpenWOP RFC 0214 §C; interop map, a2a.fields): an artifactUpdate per chunk, a
// statusUpdate when the status changed from prev, preceded on a completion
// without artifacts by the output's artifactUpdate.
func (s *Server) pushEvents(ctx context.Context, sub interop.Subject, task pushservice.TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error) {
	run := interop.Run{ID: task.ID, ContextID: task.ContextID}
	var out []wire.Event
	if ev.Chunk != nil {
		out = append(out, artifactUpdate(&run, ev.Chunk))
	}
	if ev.Status != prev {
		output, upd, err := s.statusAt(ctx, &call{subject: sub}, &run, ev)
		if err != nil {
			return nil, err
		}
		if output != nil {
			out = append(out, output)
		}
		out = append(out, upd)
	}
	return out, nil
}
