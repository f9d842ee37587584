package a2a

// What each HTTP+JSON route reads into its a2a-go request: the /{tenant}
// segment, the query parameters and the body (A2A 1.0.1 §11). The task id
// of a task route is bound after (restInput.decode); a malformed one is
// answered exactly like an unknown task (OpenWOP interop.md §Isolation).
// On a route naming an existing task the /{tenant} segment is a routing
// hint the id makes moot (see routingHint).

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// restSendMessage reads SendMessage and SendStreamingMessage: the body,
// and for a new task the routing value of the path or the body's tenant.
func restSendMessage(in restInput, v any) error {
	req := v.(*wire.SendMessageRequest)
	if err := in.readBody(req, false); err != nil {
		return err
	}
	if req.Message == nil || req.Message.TaskID == "" {
		// Only a new task is routed (see routingHint).
		tenant, err := in.s.routingValue(in.route.tenant, req.Tenant)
		if err != nil {
			return err
		}
		req.Tenant = tenant
	}
	return nil
}

func restGetTask(in restInput, v any) error {
	req := v.(*wire.GetTaskRequest)
	req.Tenant = in.route.tenant
	if v, ok := queryValue(in.r.URL.Query(), "historyLength"); ok {
		n, err := in.s.atoi("historyLength", v)
		if err != nil {
			return err
		}
		req.HistoryLength = &n
	}
	return nil
}

func restListTasks(in restInput, v any) error {
	req := v.(*wire.ListTasksRequest)
	if err := in.s.listTasksQuery(in.r.URL.Query(), req); err != nil {
		return err
	}
	req.Tenant = in.route.tenant
	return nil
}

// restCancelTask reads CancelTask: of an optional body, only its metadata.
func restCancelTask(in restInput, v any) error {
	req := v.(*wire.CancelTaskRequest)
	var sent wire.CancelTaskRequest
	if err := in.readBody(&sent, true); err != nil {
		return err
	}
	req.Tenant, req.Metadata = in.route.tenant, sent.Metadata
	return nil
}

// restSubscribe reads SubscribeToTask: a POST's optional body is checked
// and nothing of it kept; the path says everything.
func restSubscribe(in restInput, v any) error {
	req := v.(*wire.SubscribeToTaskRequest)
	if in.r.Method == http.MethodPost {
		var sent wire.SubscribeToTaskRequest
		if err := in.readBody(&sent, true); err != nil {
			return err
		}
	}
	req.Tenant = in.route.tenant
	return nil
}

func restCreatePushConfig(in restInput, v any) error {
	req := v.(*wire.PushConfig)
	if err := in.readBody(req, false); err != nil {
		return err
	}
	req.Tenant = in.route.tenant
	return nil
}

func restGetPushConfig(in restInput, v any) error {
	req := v.(*wire.GetTaskPushConfigRequest)
	req.Tenant, req.ID = in.route.tenant, in.route.config
	return nil
}

func restListPushConfigs(in restInput, v any) error {
	req := v.(*wire.ListTaskPushConfigRequest)
	q := in.r.URL.Query()
	n, ok, err := in.s.intQuery(q, "pageSize")
	if err != nil {
		return err
	}
	if ok {
		req.PageSize = n
	}
	req.Tenant = in.route.tenant
	req.PageToken, _ = queryValue(q, "pageToken")
	return nil
}

func restDeletePushConfig(in restInput, v any) error {
	req := v.(*wire.DeleteTaskPushConfigRequest)
	req.Tenant, req.ID = in.route.tenant, in.route.config
	return nil
}

func restExtendedCard(in restInput, v any) error {
	v.(*wire.GetExtendedAgentCardRequest).Tenant = in.route.tenant
	return nil
}

// routingValue reconciles the path's /{tenant} segment with a body's
// tenant member: either may carry it, and when both do they must agree.
// The refusal depends only on the two strings, never on what they resolve
// to, so it discloses nothing.
func (s *Server) routingValue(path, body string) (string, error) {
	switch {
	case body == "" || body == path:
		return path, nil
	case path == "":
		return body, nil
	}
	return "", s.errs.invalidParams("tenant", "tenant in the body differs from the path")
}

// queryValue returns the first value of a query parameter.
func queryValue(q url.Values, name string) (string, bool) {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// intQuery reads an integer query parameter; ok reports it present.
func (s *Server) intQuery(q url.Values, name string) (n int, ok bool, err error) {
	v, present := queryValue(q, name)
	if !present {
		return 0, false, nil
	}
	n, err = s.atoi(name, v)
	return n, err == nil, err
}

// atoi reads the integer query parameter name.
func (s *Server) atoi(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, s.errs.invalidParams(name, name+" must be an integer")
	}
	return n, nil
}

// listTasksQuery reads ListTasks' query parameters (A2A 1.0.1 §11.3.4)
// into req. statusTimestampAfter is also read as lastUpdatedAfter, the
// name a2a-go's REST client sends.
func (s *Server) listTasksQuery(q url.Values, req *wire.ListTasksRequest) error {
	req.ContextID, _ = queryValue(q, "contextId")
	if v, ok := queryValue(q, "status"); ok {
		req.Status = wire.TaskState(v)
	}
	req.PageToken, _ = queryValue(q, "pageToken")
	n, ok, err := s.intQuery(q, "pageSize")
	if err != nil {
		return err
	}
	if ok {
		req.PageSize = n
	}
	if v, ok := queryValue(q, "historyLength"); ok {
		n, err := s.atoi("historyLength", v)
		if err != nil {
			return err
		}
		req.HistoryLength = &n
	}
	v, ok := queryValue(q, "statusTimestampAfter")
	if !ok {
		v, ok = queryValue(q, "lastUpdatedAfter")
	}
	if ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return s.errs.invalidParams("statusTimestampAfter", "statusTimestampAfter must be an RFC 3339 timestamp")
		}
		req.StatusTimestampAfter = &t
	}
	if v, ok := queryValue(q, "includeArtifacts"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s.errs.invalidParams("includeArtifacts", "includeArtifacts must be true or false")
		}
		req.IncludeArtifacts = b
	}
	return nil
}
