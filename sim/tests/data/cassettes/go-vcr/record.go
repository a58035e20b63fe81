// Records the go-vcr cassettes of this folder: a Go HTTP client whose transport is
// go-vcr's recorder (github.com/dnaeon/go-vcr 1.2.0, Debian's
// golang-github-dnaeon-go-vcr-dev) runs the weather-tool loop of ../record.py
// against `turnsim serve --scenario ../script.json`, once per API, each reply's
// content sent back as the next request's history; `mixed` runs the three loops
// into one cassette against one server. The cassettes are go-vcr's own
// output (format version 1); only the key header is dropped before saving.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run record.go BASE_URL
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/dnaeon/go-vcr/cassette"
	"github.com/dnaeon/go-vcr/recorder"
)

type obj = map[string]interface{}

var schema = obj{"type": "object", "properties": obj{"city": obj{"type": "string"}}, "required": []string{"city"}}

const result = "sunny, 21 C"

func post(c *http.Client, url string, body obj, headers map[string]string) (int, obj) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("content-type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out obj
	if err := json.Unmarshal(raw, &out); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v: %s\n", url, err, raw)
		os.Exit(1)
	}
	return resp.StatusCode, out
}

func messages(c *http.Client, base string) {
	tool := obj{"name": "get_weather", "description": "The weather in a city.", "input_schema": schema}
	history := []interface{}{obj{"role": "user", "content": "What is the weather in Lyon?"}}
	h := map[string]string{"x-api-key": "test", "anthropic-version": "2023-06-01"}
	for step := 0; step < 3; step++ {
		_, reply := post(c, base+"/v1/messages", obj{"model": "claude-sonnet-4-5", "max_tokens": 2048,
			"thinking": obj{"type": "enabled", "budget_tokens": 1024}, "tools": []interface{}{tool}, "messages": history}, h)
		content := reply["content"].([]interface{})
		history = append(history, obj{"role": "assistant", "content": content})
		var results []interface{}
		for _, b := range content {
			if b := b.(obj); b["type"] == "tool_use" {
				results = append(results, obj{"type": "tool_result", "tool_use_id": b["id"], "content": result})
			}
		}
		if len(results) == 0 {
			return
		}
		history = append(history, obj{"role": "user", "content": results})
	}
}

func chat(c *http.Client, base string) {
	tool := obj{"type": "function", "function": obj{"name": "get_weather", "description": "The weather in a city.", "parameters": schema}}
	history := []interface{}{obj{"role": "system", "content": "You answer briefly."}, obj{"role": "user", "content": "What is the weather in Lyon?"}}
	h := map[string]string{"authorization": "Bearer test"}
	for step := 0; step < 3; step++ {
		_, reply := post(c, base+"/v1/chat/completions", obj{"model": "gpt-4o", "tools": []interface{}{tool}, "messages": history}, h)
		m := reply["choices"].([]interface{})[0].(obj)["message"].(obj)
		assistant := obj{"role": "assistant", "content": m["content"]}
		calls, _ := m["tool_calls"].([]interface{})
		if len(calls) > 0 {
			assistant["tool_calls"] = calls
		}
		history = append(history, assistant)
		if len(calls) == 0 {
			return
		}
		for _, tc := range calls {
			history = append(history, obj{"role": "tool", "tool_call_id": tc.(obj)["id"], "content": result})
		}
	}
}

func responses(c *http.Client, base string) {
	tool := obj{"type": "function", "name": "get_weather", "description": "The weather in a city.", "parameters": schema}
	items := []interface{}{obj{"role": "user", "content": "What is the weather in Lyon?"}}
	h := map[string]string{"authorization": "Bearer test"}
	for step := 0; step < 3; step++ {
		_, reply := post(c, base+"/v1/responses", obj{"model": "gpt-5", "tools": []interface{}{tool}, "reasoning": obj{"effort": "low"},
			"store": false, "include": []string{"reasoning.encrypted_content"}, "input": items}, h)
		output := reply["output"].([]interface{})
		items = append(items, output...)
		n := 0
		for _, o := range output {
			if o := o.(obj); o["type"] == "function_call" {
				items = append(items, obj{"type": "function_call_output", "call_id": o["call_id"], "output": result})
				n++
			}
		}
		if n == 0 {
			return
		}
	}
}

func record(name string, loop func(*http.Client, string), base string) {
	os.Remove(name + ".yaml")
	r, err := recorder.New(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r.AddSaveFilter(func(i *cassette.Interaction) error {
		delete(i.Request.Headers, "X-Api-Key")
		delete(i.Request.Headers, "Authorization")
		return nil
	})
	loop(&http.Client{Transport: r}, base)
	if err := r.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	base := os.Args[1]
	switch os.Args[2] {
	case "messages":
		record("go-vcr-corpus-anthropic-json", messages, base)
	case "chat":
		record("go-vcr-corpus-chat-json", chat, base)
	case "responses":
		record("go-vcr-corpus-responses-json", responses, base)
	case "mixed":
		// The three loops, one after the other, into one cassette: each opens with
		// the same user message, and each is a conversation of its own API.
		record("go-vcr-corpus-mixed-apis", func(c *http.Client, base string) {
			messages(c, base)
			chat(c, base)
			responses(c, base)
		}, base)
	}
}
