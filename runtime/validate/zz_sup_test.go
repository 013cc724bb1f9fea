package validate
import ("github.com/santhosh-tekuri/jsonschema/v6";"testing";"github.com/agenthooks/agenthooks-go/schemas")
func TestTmpSupported(t *testing.T){
 v,_:=New()
 for _,n:=range schemas.Documents(){ f,_:=v.fast.Load(n); sch,_:=v.cache.Load(n); _, err := compileFast(sch.(*jsonschema.Schema)); t.Log(n, f.(*fastSchema).root!=nil, err)}
}
