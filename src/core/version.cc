// Anchor translation unit of libnicq.so; the layers are linked in whole.
namespace nicq {
extern const char kVersion[] = "0.1.0";
}
