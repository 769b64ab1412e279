<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/error_body.tpl -->
<div id="preview" class="post row2">
	<div class="inner"><span class="corners-top"><span></span></span>
		<br />
		<p class="center" style="color: red;">{ERROR_MESSAGE}</p>
		<br />
	<span class="corners-bottom"><span></span></span></div>
</div>
