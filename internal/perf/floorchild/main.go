// Command floorchild is the floor backend of the stdio round trip: for each
// line on stdin until its end it decodes the request into a map with
// encoding/json and encodes the answer of roundtrip.Response (an intercept
// result without effects, echoing the id) as one line.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriter(os.Stdout)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		var req map[string]any
		if err := json.Unmarshal(line, &req); err != nil {
			os.Exit(1)
		}
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req["id"],
			"result": map[string]any{"protocolVersion": "draft", "effects": []any{}}})
		_, _ = w.Write(append(out, '\n'))
		if err := w.Flush(); err != nil {
			os.Exit(1)
		}
	}
}
