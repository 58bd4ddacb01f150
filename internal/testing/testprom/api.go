package testprom

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Sample is one series of an instant vector.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// TargetHealth is the scrape state of one target.
type TargetHealth struct {
	Job       string
	ScrapeURL string
	Health    string // "up", "down" or "unknown" (not scraped yet)
	LastError string
}

// Query evaluates promql now and returns its value: the one sample of an
// instant vector, or a scalar. It returns ErrNoData for an empty vector and
// an error for several samples.
func (s *Server) Query(ctx context.Context, promql string) (float64, error) {
	v, err := s.QueryVector(ctx, promql)
	if err != nil {
		return 0, err
	}
	switch len(v) {
	case 0:
		return 0, fmt.Errorf("%w for %s", ErrNoData, promql)
	case 1:
		return v[0].Value, nil
	}
	return 0, fmt.Errorf("testprom: %s has %d samples, want one: %v", promql, len(v), v)
}

// QueryVector evaluates promql now and returns its samples (a scalar is
// one sample without labels).
func (s *Server) QueryVector(ctx context.Context, promql string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query?query="+url.QueryEscape(promql), &data); err != nil {
		return nil, fmt.Errorf("testprom: query %s: %w", promql, err)
	}
	switch data.ResultType {
	case "scalar":
		var pair [2]any
		if err := json.Unmarshal(data.Result, &pair); err != nil {
			return nil, err
		}
		v, err := parseValue(pair)
		if err != nil {
			return nil, err
		}
		return []Sample{{Value: v}}, nil
	case "vector":
		var series []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &series); err != nil {
			return nil, err
		}
		out := make([]Sample, 0, len(series))
		for _, sr := range series {
			v, err := parseValue(sr.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Labels: sr.Metric, Value: v})
		}
		return out, nil
	}
	return nil, fmt.Errorf("testprom: query %s: result type %q, want vector or scalar", promql, data.ResultType)
}

// parseValue reads the value of a [timestamp, "value"] pair.
func parseValue(pair [2]any) (float64, error) {
	s, ok := pair[1].(string)
	if !ok {
		return 0, fmt.Errorf("testprom: sample value %v is not a string", pair[1])
	}
	return strconv.ParseFloat(s, 64)
}

// Targets returns the scrape state of the active targets.
func (s *Server) Targets(ctx context.Context) ([]TargetHealth, error) {
	var data struct {
		ActiveTargets []struct {
			Labels    map[string]string `json:"labels"`
			ScrapeURL string            `json:"scrapeUrl"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := s.get(ctx, "/api/v1/targets?state=active", &data); err != nil {
		return nil, fmt.Errorf("testprom: targets: %w", err)
	}
	out := make([]TargetHealth, 0, len(data.ActiveTargets))
	for _, at := range data.ActiveTargets {
		out = append(out, TargetHealth{Job: at.Labels["job"], ScrapeURL: at.ScrapeURL, Health: at.Health, LastError: at.LastError})
	}
	return out, nil
}

// Await polls promql (every 200 ms) until ok accepts its value, and
// returns that value; or the last value or error when ctx ends.
func (s *Server) Await(ctx context.Context, promql string, ok func(float64) bool) (float64, error) {
	for {
		v, err := s.Query(ctx, promql)
		if err == nil && ok(v) {
			return v, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("testprom: %s = %v, not accepted before %w", promql, v, ctx.Err())
			}
			return v, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// AwaitTargets polls Targets (every 200 ms) until ok accepts them, and
// returns them; or the last ones and an error when ctx ends.
func (s *Server) AwaitTargets(ctx context.Context, ok func([]TargetHealth) bool) ([]TargetHealth, error) {
	for {
		ts, err := s.Targets(ctx)
		if err == nil && ok(ts) {
			return ts, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("testprom: targets %+v not accepted before %w", ts, ctx.Err())
			}
			return ts, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// get calls the HTTP API at path and decodes the data of its success
// envelope into data.
func (s *Server) get(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s", env.ErrorType, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}
