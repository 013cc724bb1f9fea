// Command echo is the baseline of perevent: it decodes the one request on
// stdin into a map with encoding/json and encodes the same answer perevent
// gives (an intercept result without effects, echoing the id).
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		os.Exit(1)
	}
	var req map[string]any
	if err := json.Unmarshal(line, &req); err != nil {
		os.Exit(1)
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req["id"],
		"result": map[string]any{"protocolVersion": "draft", "effects": []any{}}})
	_, _ = os.Stdout.Write(append(out, '\n'))
}
