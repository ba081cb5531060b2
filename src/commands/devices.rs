//! `chromaflow devices`: adapters with backend, type, driver, key features and limits.

use chromaflow::runtime::list_adapters;

pub fn run(json: bool) -> anyhow::Result<()> {
    let adapters = list_adapters();
    if json {
        println!("{}", serde_json::to_string_pretty(&adapters)?);
        return Ok(());
    }
    if adapters.is_empty() {
        anyhow::bail!(chromaflow::error::Error::Gpu(
            "no GPU adapter found (Vulkan, Metal or DX12); on Linux install mesa-vulkan-drivers \
             for the software adapter"
                .into()
        ));
    }
    for (i, a) in adapters.iter().enumerate() {
        let yes = |b: bool| if b { "yes" } else { "no" };
        println!(
            "[{i}] {}{}",
            a.name,
            if i == 0 { "  (default)" } else { "" }
        );
        println!("    backend {}  type {}", a.backend, a.device_type);
        println!("    driver  {} {}", a.driver, a.driver_info);
        println!(
            "    features: timestamps {}  float32-filterable {}  f64 {}  subgroups {}",
            yes(a.timestamps),
            yes(a.float32_filterable),
            yes(a.shader_f64),
            yes(a.subgroups)
        );
        println!(
            "    limits: storage binding {} MiB  buffer {} MiB  workgroups/dim {}  invocations/group {}",
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup
        );
    }
    Ok(())
}
