package validate_test

import (
	"errors"
	"fmt"

	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

func ExampleValidator_Validate() {
	v := validate.Default()

	effect := []byte(`{"type":"flow","operation":"stop","reason":"Budget reached."}`)
	fmt.Println(v.Validate("effect.schema.json", effect))

	effect = []byte(`{"type":"flow","operation":"stop","reason":"Budget reached.","token":"s3cr3t"}`)
	err := v.Validate("effect.schema.json#/$defs/StopFlowEffect", effect)
	fmt.Println(err)

	var verr *validate.Error
	if errors.As(err, &verr) {
		fmt.Println(errors.Is(err, validate.ErrInvalid), verr.Pointer == "", verr.Keyword)
	}

	fmt.Println(v.Validate("effect.schema.json", []byte(`{"type":`)))
	// Output:
	// <nil>
	// ahp: schema effect.schema.json#/$defs/StopFlowEffect: (root): keyword "additionalProperties" failed (unexpected "token")
	// true true additionalProperties
	// ahp: schema effect.schema.json: malformed JSON at byte offset 8
}
