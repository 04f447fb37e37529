fn main() {
    napi_build::setup();
    // A macOS library records the name it is loaded by (LC_ID_DYLIB). With
    // none given, the linker writes the path the library was built at, a
    // path of the build machine, into every published binary.
    if std::env::var("CARGO_CFG_TARGET_VENDOR").as_deref() == Ok("apple") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/offloop.node");
    }
}
